//go:build !amd64 && !arm64

package stream

// evenBlocks is evenBlocksSafe where unaligned access is not a given.
func evenBlocks(pairs, blocks []byte, w, d, hdr uint32, vlen int) int {
	return evenBlocksSafe(pairs, blocks, w, d, hdr, vlen)
}
