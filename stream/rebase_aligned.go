//go:build !amd64 && !arm64

package stream

// evenBlocks is evenBlocksSafe where unaligned access is not a given.
func evenBlocks(pairs, src, blocks []byte, w, d, hdr uint32, vlen int) int {
	return evenBlocksSafe(pairs, src, blocks, w, d, hdr, vlen)
}
