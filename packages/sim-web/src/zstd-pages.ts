/**
 * The zstd pages of the encodings site as the reference encoder (zstd 1.5.4) wrote them: Node 20 has no zstd
 * encoder, and a decoder is only tested on compressed blocks (Huffman literals, FSE-coded sequences) by an encoder's
 * output. Each decodes to the page `encodingCases()` writes for its name (encodings.test.ts checks it does); after a
 * change to those pages, write each page to a file and run
 *
 *   zstd: `zstd -19 --stream-size=<bytes> -c < page.html`, one frame with its content size and a checksum;
 *   zstd-streamed: the page's first half and the rest each through `zstd -3 --zstd=wlog=23 -c` (stdin, so no content
 *   size, and an 8 MiB window, the most RFC 9659 allows), concatenated: two frames, as a server that ends a frame per
 *   flush sends.
 */
export const ZSTD_PAGES: Record<'zstd' | 'zstd-streamed', string> = {
  zstd: 'KLUv/WRGAo0FAEJKIRyg7f+tqnZn1+CPbrPUmtScNCjHWiJtGmj5PTECgE/UT2ZmbofcxUqVTi7wb7LyUyULBiSvubCdTu1TZnGv90Hw2SGqNFZPTYiv8mt17Hyq7VeJLQa1lRG0FqOTcauBYj70L9jOxcppgJs7PtZtlLE6XE5Pvz1CObsBn6ifmywNcyhI0AEOAP7EEHeijqpglwql02DIp4zqDFYpMitBZQILqmt1xh/q4mrOqKuAAf5sZwo=',
  'zstd-streamed': 'KLUv/QRoVQQAIggcILA3B8wRhq5NsCRPRB5DcreUUuOY0LARyYDI1gHxxBkBTUpULA67MKA0xm41xPjW35xCf/bgt3749sFWtsHHPNEmkR5+eGovi72zqQh2hkQpU3Iz284/g/8lkJud0l6efSpveybShXlHhFBI1EAAyAcAl5ShhsGa+PEglFmpZeo2+RxSVwEDCzFmZyi1L/0EaE0EADJJHh+gNwf/WVVN9GshmYooUSuy3dJu+gXWRWa81ByhKngEhrLlF6YmFGPAVGap31lMZQ+mNsPUxQzcwZvpoXhZdr4h6luEj2DH5IyHIGFn3aY2S2XPtegUb8UkJyDv/M4Mbn1D987t2kLHyjbXehW0SUMbTMUi2XQA9QEDAKmUocBglS5/TUEBlSAQHA==',
};
