/** The first Chrome to offer zstd, which it has sent in every navigation's accept-encoding since. */
const FIRST_CHROME_WITH_ZSTD = 123;

/**
 * Request headers a desktop Chrome sends for a top-level navigation. Sites that only check headers treat
 * plain HTTP with these as a browser; the client hints and accept-encoding agree with the user agent's major version
 * (a Chrome 138 that does not offer zstd is not one).
 */
export function browserLikeHeaders(userAgent: string): Record<string, string> {
  const major = userAgent.match(/Chrome\/(\d+)/)?.[1] ?? '138';
  const platform = /Windows/.test(userAgent) ? 'Windows' : /Mac OS X/.test(userAgent) ? 'macOS' : 'Linux';
  return {
    'user-agent': userAgent,
    accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8',
    'accept-language': 'en-US,en;q=0.9',
    'accept-encoding': Number(major) >= FIRST_CHROME_WITH_ZSTD ? 'gzip, deflate, br, zstd' : 'gzip, deflate, br',
    'sec-ch-ua': `"Not)A;Brand";v="8", "Chromium";v="${major}", "Google Chrome";v="${major}"`,
    'sec-ch-ua-mobile': '?0',
    'sec-ch-ua-platform': `"${platform}"`,
    'sec-fetch-dest': 'document',
    'sec-fetch-mode': 'navigate',
    'sec-fetch-site': 'none',
    'sec-fetch-user': '?1',
    'upgrade-insecure-requests': '1',
  };
}

/** What Chrome offers where the connection is not encrypted: no brotli, no zstd (a middlebox may mangle them). */
const PLAIN_TEXT_ENCODINGS = 'gzip, deflate';

/**
 * The accept-encoding Chrome sends to `url`: the full list (`offered`, from {@link browserLikeHeaders}) over https and
 * to localhost, which it trusts as it trusts https, and only gzip and deflate to any other http:// origin. A plain
 * HTTP fetch that offered brotli to an http:// site would be a Chrome that is not one.
 */
export function acceptEncodingFor(url: URL, offered: string): string {
  if (url.protocol === 'https:') return offered;
  const host = url.hostname.toLowerCase();
  const local = host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  return local ? offered : PLAIN_TEXT_ENCODINGS;
}
