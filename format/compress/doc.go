// Package compress gives the archive reader the decompressed bytes of a
// possibly compressed PCP archive file (.meta, .index, .N), with random
// access where the compressed format makes it cheap.
//
// PCP lets every archive file carry one of the suffixes in [Suffixes]. [Open]
// picks a decoder from the suffix, confirms it with the file's magic bytes
// (so a gzip file named .Z or an xz file named .lzma still opens, as it does
// with PCP's external `gzip -dc` / `xz -dc`), and returns a [File]: an
// io.ReaderAt, io.Reader, io.Seeker and io.Closer over the decompressed
// bytes, with their total [File.Size].
//
// How each format is served:
//
//	plain            the *os.File itself
//	.xz              the stream index (at the end of the file) lists every
//	                 block's compressed and decompressed size; each block is
//	                 decoded on its own, on demand, into a small LRU cache
//	                 (pmlogger_daily writes `xz -0 --block-size=10MiB`)
//	.zst + seek table the same, one zstd frame per block (see SeekableWriter)
//	everything else  decoded once, at Open, into memory, or into an unlinked
//	                 temporary file when it exceeds Options.MemLimit
//	                 (.gz .z .bz2 .bz .Z .lzma, .zst without a seek table, and
//	                 .xz whose blocks are larger than Options.MaxSegment)
//
// The block-at-a-time path decodes the next block in the background when it
// sees sequential access (from the second access on: a File opened for its
// label, or for one index entry's records, decodes no block it does not
// read), so a consumer that parses records overlaps with decompression, and
// two blocks decode at once on two cores. A read within the first 256 KiB
// of a large block that is not decoded yet (a volume's label and first
// records, which the archive reader reads on its own, in a File it then
// closes, before it reads the volume through) is served by decoding only
// the LZMA2 chunks that hold it (a Read there returns no more than the
// head: a reader that wants one record asks for a buffer's worth); the
// block's check is verified when the block is decoded whole, which any read
// past the head does.
//
// xz blocks whose only filter is LZMA2 (all that xz(1) and pmlogger_daily
// write) are decoded by this package's own LZMA2 decoder (lzma2.go) into
// the block's buffer, which serves as the dictionary: no circular buffer,
// no copy out of it, no allocation per operation. Other filter chains go
// through ulikunitz/xz as described below. CPU time (user+system, best of
// three, on a loaded 2-vCPU AMD EPYC VM, 2026-11-24) for one 10 MiB block
// made by `xz -0`, decoded and checked:
//
//	                                  ours     ulikunitz/xz   liblzma (xz -dc)
//	bozo-20170904.0 (QA, 35x)         27 ms    50 ms          ~22 ms
//	hourly bench volume (5x, synth.)  117 ms   245 ms         110 ms
//
// ours is 1.8-2.1x ulikunitz/xz and 0.8-0.95x liblzma. What got it there:
// the block's buffer as the dictionary; branch-free bit decoding (a literal's
// bits are coin flips to a branch predictor: 167 to 130 ms); the range
// coder's state passed by value through two small functions the compiler
// inlines, so that it stays in registers (through a pointer it lived on
// the stack); 32-bit probabilities and 64 bytes of input slack, checked once
// per step, to fit the compiler's inlining budget.
//
// zstd decodes at hundreds of MB/s, which is why SeekableWriter exists.
//
// [XZWriter] writes xz as `xz -T2` does: independent blocks (4 MiB of
// input each by default) whose headers carry both sizes, an index, CRC64
// checks; blocks are compressed on every core with ulikunitz/xz's LZMA2
// encoder (hash-chain matcher, 256 KiB dictionary: about 45 MB/s a core,
// files about twice the size of `xz -0`'s). PCP 6.0.3 reads the result
// (it cannot read .zst); the interop tests check that with pmdumplog and
// pmlogcheck.
//
// [SeekableWriter] writes zstd in Facebook's "seekable format": independent
// frames followed by a seek table in a skippable frame. Any zstd decoder reads
// it as ordinary zstd (`zstd -d` ignores the skippable frame); this package
// uses the table for random access.
//
// Damaged input yields errors of type *[FormatError], which name the file,
// the format, an offset and what is wrong, and wrap io.ErrUnexpectedEOF for
// truncation. Nothing here trusts a size field: allocations are bounded by
// the bytes actually present, by Options.MaxSegment for cached blocks, and
// by Options.MaxSize for whole-file decodes.
//
// # Formats in brief
//
// xz: a file is one or more streams (with zero padding between them); a
// stream is a 12-byte header, blocks, an index and a 12-byte footer whose
// "backward size" locates the index. ulikunitz/xz has no API to decode one
// block, so a block is decoded by presenting the decoder with a synthetic
// one-block stream: the original stream header, the block bytes read straight
// from the file, and a freshly built one-record index and footer. The
// decoder then checks the block header CRC, the block's check (CRC32, CRC64
// or SHA-256) and the sizes itself. The LZMA2 dictionary size in the block
// header is lowered to the block's decompressed size before that (and the
// header CRC recomputed), so a lying header cannot make the decoder allocate
// gigabytes.
//
// .Z: Unix compress, LZW with 9- to 16-bit codes, written LSB first. In
// "block mode" code 256 clears the table. The writer emits codes in groups of
// eight codes of one width; when the width grows, or after a clear code, the
// rest of the current group is padding, so a decoder has to skip it. Go's
// compress/lzw does not know about either, hence the small decoder in lzw.go.
//
// zstd seekable format: a skippable frame (magic 0x184D2A5E) closes the
// file. Its payload is one entry per data frame (compressed size, decompressed
// size, both 32-bit little endian, plus a 32-bit checksum when the descriptor
// says so) and a 9-byte footer: frame count, descriptor byte (bit 7:
// checksums present; bits 2..6 reserved, must be zero) and the magic
// 0x8F92EAB1 as the file's last four bytes. The checksum is the low 32 bits
// of the XXH64 of the frame's decompressed bytes, which is exactly what a
// zstd frame stores as its own content checksum, so the writer copies it from
// the frame trailer instead of hashing again.
//
// # Designs rejected
//
//   - Lazy decoding of stream formats (decode only as far as reads go). Size
//     would then have to decode everything anyway, and a File whose Size or
//     ReadAt can fail halfway has no way to report it through Size() int64:
//     a truncated .gz would look like a shorter, valid file. Decoding at Open
//     makes every error surface there.
//   - Decoding a multi-block xz file whole, as PCP does when it cannot use
//     liblzma: a day of archives is gigabytes, and the index makes it
//     unnecessary.
//   - Writing a per-block LZMA2 decoder on top of ulikunitz/xz/lzma (parse the
//     block header, verify the check ourselves): the synthetic stream gets all
//     of that checking from the library for 40 bytes of framing. (Kept for
//     filter chains other than a lone LZMA2; the common case now has its own
//     decoder, for speed, and checks the header and check itself.)
//   - Other pure-Go xz decoders from the module proxy, measured on one
//     volume: github.com/xi2/xz (a port of XZ Embedded) and its fork
//     github.com/therootcompany/xz were 1.2-1.6x ulikunitz/xz's speed,
//     below this package's decoder, and stream-only (no block API).
//   - liblzma through cgo (Debian's liblzma-dev): 1.05-1.25x this
//     package's decoder per core (measured as above; 1.6x before the
//     branch-free decoding). Not the large gain that would pay for cgo:
//     the module is pure Go, builds and fuzzes with CGO_ENABLED=0 and needs
//     no C toolchain.
//   - Decoding the single block of a one-block file (plain `xz`, no
//     --block-size) in parallel: LZMA2 chunks depend on each other unless
//     the encoder reset the dictionary, which xz does only at blocks. Such
//     files are decoded whole as before (see MaxSegment).
//   - Caching decoded blocks across Files of one path: the archive reader
//     opens a volume up to three times (label, end time, records), but a
//     merge of N archives finds every archive's end before it reads the
//     first, so an LRU of any affordable size has evicted the first
//     archive's blocks by then.
//   - Indexing plain zstd files by walking their frame headers: the zstd tool
//     writes one frame per file, so there would be nothing to index.
//   - Go's compress/lzw for .Z: different bit packing rules (no group
//     padding, no clear code handling of this kind).
//   - Trusting a .lzma header's dictionary size: the format has no magic
//     and no header checksum, so any garbage is a header, possibly asking
//     for 4 GiB. The header is rewritten to ask for at most
//     min(256 MiB, Options.MaxSize); a genuine file needing more then fails
//     with a distance error (xz -9 uses 64 MiB).
package compress
