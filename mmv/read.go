package mmv

import (
	"fmt"
	"io"
	"os"
)

// maxFileSize bounds the bytes read from one MMV file: pmdammv maps the
// whole file, and libpcp_mmv never writes one this large.
const maxFileSize = 1 << 30

// ReadFile returns a snapshot of the MMV file's bytes. The file is read,
// not mapped: a file that shrinks while it is read gives a shorter
// snapshot, never a fault.
func ReadFile(name string) ([]byte, error) { return readInto(name, nil) }

// readInto is ReadFile reading into buf's storage when it is large
// enough.
func readInto(name string, buf []byte) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if st.Size() > maxFileSize {
		return nil, fmt.Errorf("%s: %d bytes: too large for an MMV file (limit %d)", name, st.Size(), maxFileSize)
	}
	// read what the size promised, and no more: a file that grew since
	// is read in the next sample; one that shrank gives fewer bytes
	size := int(st.Size())
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	data := buf[:size]
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	data = data[:n]
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: empty file", name)
	}
	return data, nil
}
