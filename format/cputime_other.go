//go:build !unix

package format

import "time"

// processCPU is not known here: plain volumes are written directly.
func processCPU() (time.Duration, bool) { return 0, false }
