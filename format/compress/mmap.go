package compress

// Mapper is implemented by files that can lend their whole content as
// memory. The data volume reader uses it for plain files: records are then
// framed and decoded where they lie in the page cache, with no read system
// call and no copy into a buffer, which is most of what a copy through
// pcpcat used to spend beyond the write.
type Mapper interface {
	// Map returns the file's first n bytes as read-only memory, valid
	// until Close. ok is false when the file cannot be mapped (the caller
	// then reads it as a stream).
	Map(n int64) (b []byte, ok bool)
}
