/** The big pages of the hostile-pages bench, as bytes: made once, before anything is measured. */
const MiB = 1024 * 1024;
const MAX_BYTES = 10 * MiB;

/** A page with readable text and `body` inside its `<body>`. */
export function hostileHtml(body: string, head = ''): string {
  return `<!doctype html><html><head><title>hostile</title>${head}</head><body><p>${'Readable text of the page. '.repeat(20)}</p>${body}</body></html>`;
}

export const HOSTILE_BODIES: Record<string, () => Buffer> = {
  big10m: () => {
    const filler = '<p>' + 'x'.repeat(1000) + '</p>';
    return Buffer.from(hostileHtml(filler.repeat(Math.floor((MAX_BYTES - 4096) / filler.length))));
  },
  links500k: () => {
    const parts: string[] = [];
    for (let i = 0; i < 500_000; i++) parts.push(`<a href=/p/${i}>`);
    return Buffer.from(hostileHtml(parts.join('')));
  },
  nested200k: () => Buffer.from(hostileHtml('<div>'.repeat(200_000) + '<a href="/deep">deep</a>' + '</div>'.repeat(200_000))),
  attr5m: () => Buffer.from(hostileHtml(`<a href="/ok">ok</a><div data-x="${'a'.repeat(5 * MiB)}">x</div><a href="/after">after</a>`)),
  hrefAttr5m: () => Buffer.from(hostileHtml(`<a href="/${'a'.repeat(5 * MiB)}">x</a><a href="/after">after</a>`)),
};
