//go:build !linux

package format

import "os"

func startWriteback(*os.File, int64, int64) {}
