/**
 * Deterministic page bodies for the synthetic web. Every page is assembled from a fixed pool of pre-built
 * paragraphs so that 50k pages cost no memory beyond the pool, and every run serves byte-identical pages
 * (a reference and our crawler parse exactly the same bytes).
 */

const WORDS = (
  'the harbour town market river valley council museum lighthouse keeper cottage bakery bread village ' +
  'morning tide fishing boats merchants wool square century records weekly visitors station railway ' +
  'bridge school library garden festival summer winter autumn spring rain storm coast cliff path walk ' +
  'history local people family house street church tower bell clock road north south east west inland ' +
  'farm field orchard apples cider cheese dairy cattle sheep hill moor forest oak beech stream mill ' +
  'water power engine steam ferry island harbour master trade route shipping cargo warehouse crane dock ' +
  'report news article editor reader letter opinion review theatre concert music band choir painting ' +
  'exhibition gallery artist sculptor writer poet novel chapter story evening night lamp window door'
).split(' ');

/** mulberry32: a tiny seeded PRNG, so the same seed always yields the same page. */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function buildSentence(rand: () => number): string {
  const length = 8 + Math.floor(rand() * 14);
  const words: string[] = [];
  for (let i = 0; i < length; i++) words.push(WORDS[Math.floor(rand() * WORDS.length)]!);
  const first = words[0]!;
  words[0] = first[0]!.toUpperCase() + first.slice(1);
  return `${words.join(' ')}.`;
}

function buildParagraph(rand: () => number): string {
  const sentences: string[] = [];
  const count = 4 + Math.floor(rand() * 5);
  for (let i = 0; i < count; i++) sentences.push(buildSentence(rand));
  return `<p>${sentences.join(' ')}</p>\n`;
}

const POOL_SIZE = 512;
const PARAGRAPHS: string[] = (() => {
  const rand = createRandom(0x5eed);
  return Array.from({ length: POOL_SIZE }, () => buildParagraph(rand));
})();

// What a real page carries besides its article: an analytics snippet and a chunk of inline state. Crawlers
// must download and skip it, which is part of what parsing costs.
const INLINE_SCRIPT = `<script>
window.dataLayer = window.dataLayer || [];
function gtag(){dataLayer.push(arguments);}
gtag('js', new Date()); gtag('config', 'G-BENCH0001', { anonymize_ip: true });
window.__SITE_STATE__ = ${JSON.stringify({ theme: 'light', features: ['comments', 'newsletter', 'search'], build: 'a1b2c3d', experiments: Array.from({ length: 24 }, (_, i) => ({ id: `exp-${i}`, variant: i % 3 })) })};
</script>`;

const STYLE = `<style>
body{font-family:Georgia,serif;margin:0;color:#222}header,footer{background:#f4f1ea;padding:1rem 2rem}
nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.5rem}main{max-width:44rem;margin:2rem auto;line-height:1.6}
.related li{margin:.25rem 0}.byline{color:#666;font-size:.9rem}
</style>`;

/** Options of {@link renderPage}. */
export interface PageSpec {
  /** Global page index (0-based); decides the text, the size and the title. */
  index: number;
  /** Total HTML size to aim for, in bytes (the page ends up within a paragraph of it). */
  targetBytes: number;
  /** Hrefs of the site navigation (same-site, relative). */
  navHrefs: string[];
  /** Hrefs of related stories (relative same-site or absolute cross-site). */
  relatedHrefs: string[];
}

/** The title of page `index`: also what references extract and compare. */
export function pageTitle(index: number): string {
  return `Harbour Gazette story ${index}`;
}

/** HTML size of page `index` in bytes: spread evenly over 10–60 KB by a hash of the index. */
export function pageTargetBytes(index: number): number {
  const rand = createRandom(index * 2654435761);
  return 10_240 + Math.floor(rand() * 51_200);
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** Render one page: head with styles and scripts, nav, an article of pooled paragraphs, related links, footer. */
export function renderPage(spec: PageSpec): string {
  const title = pageTitle(spec.index);
  const nav = spec.navHrefs.map((h, i) => `<li><a href="${escapeAttr(h)}">Section ${i + 1}</a></li>`).join('');
  const related = spec.relatedHrefs
    .map((h, i) => `<li><a href="${escapeAttr(h)}">Related story ${i + 1}</a></li>`)
    .join('\n');
  const head = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><meta name="description" content="Story ${spec.index} from the Harbour Gazette archive.">
<link rel="stylesheet" href="/static/site.css">${STYLE}
<script src="/static/app.js" defer></script>${INLINE_SCRIPT}
</head><body><header><a href="/">Harbour Gazette</a><nav><ul>${nav}</ul></nav></header>
<main><article><h1>${title}</h1><p class="byline">By the newsroom</p>
`;
  const tail = `</article>
<aside><h2>Related</h2><ul class="related">
${related}
</ul></aside></main>
<footer><p>Harbour Gazette, printed on recycled paper.</p><a href="/about">About</a> <a href="/contact">Contact</a></footer>
</body></html>`;
  const parts: string[] = [head];
  let size = head.length + tail.length;
  const rand = createRandom(spec.index + 1);
  while (size < spec.targetBytes) {
    const p = PARAGRAPHS[Math.floor(rand() * POOL_SIZE)]!;
    parts.push(p);
    size += p.length;
  }
  parts.push(tail);
  return parts.join('');
}
