//go:build !unix

package compress

func (f *plainFile) Map(n int64) ([]byte, bool) { return nil, false }

func (f *plainFile) unmap() {}

// PageSize is the unit of Release.
var PageSize = 4096

// Release does nothing where files are not mapped.
func Release(b []byte) {}
