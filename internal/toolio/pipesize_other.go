//go:build !linux

package toolio

import "os"

func growPipe(*os.File) {}
