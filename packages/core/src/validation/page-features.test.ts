import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { MAX_OPEN_ELEMENTS } from '../crawl/html-events.js';
import { MAX_OPEN_ELEMENTS_HIDDEN, TOKENIZER_INTERNALS_MATCH, extractPageFeatures } from './page-features.js';
import { referencePageFeatures } from './__fixtures__/page-features-reference.js';

/**
 * extractPageFeatures walks htmlparser2's events without decoding entities and decodes the text it keeps itself;
 * these pages exercise where that could differ from the decoded DOM cheerio builds (expected values are what the
 * walk over cheerio's DOM gave): entities in text, title and attributes, raw-text elements, the title's end-tag
 * quirk, a self-closed <script/>, bodies cut inside a tag, mount-point counting and the quoted-markup spans.
 */
const CASES: Record<string, { html: string; expected: Record<string, unknown> }> = {
  "entities": {
    "html": "<title>A &amp; B &lt;x</title><body><p id=\"a&amp;b\">Fish &amp; chips &notin; &copy</p><input type=\"te&#x78;t\" name=\"q\"><textarea>&amp; raw</textarea><script>var a=\"&amp;\"</script></body>",
    "expected": {
      "title": "A & B <x",
      "visibleText": "Fish & chips ∉ © &amp; raw",
      "noscriptText": "",
      "scriptRatio": 0.16129032258064516,
      "scriptCount": 1,
      "bodyElementCount": 3,
      "linkCount": 0,
      "emptyMountIds": [
        "a&b"
      ],
      "dataFieldCount": 2,
      "markupLower": "<title>a &amp; b &lt;x</title><body><p id=\"a&amp;b\">fish &amp; chips &notin; &copy</p><input type=\"te&#x78;t\" name=\"q\"><script>var a=\"&amp;\"</script></body>"
    }
  },
  "titleEndTagQuirk": {
    "html": "<title>a </&amp; <&amp; b &amp;</title><p>x</p>",
    "expected": {
      "title": "a </&amp; <&amp; b &",
      "visibleText": "x",
      "noscriptText": "",
      "scriptRatio": 0,
      "scriptCount": 0,
      "bodyElementCount": 1,
      "linkCount": 0,
      "emptyMountIds": [],
      "dataFieldCount": 0,
      "markupLower": "<title>a </&amp; <&amp; b &amp;</title><p>x</p>"
    }
  },
  "selfClosingScript": {
    "html": "<body><script/>x &amp; y</body>",
    "expected": {
      "title": "",
      "visibleText": "",
      "noscriptText": "",
      "scriptRatio": 0.8064516129032258,
      "scriptCount": 1,
      "bodyElementCount": 0,
      "linkCount": 0,
      "emptyMountIds": [],
      "dataFieldCount": 0,
      "markupLower": "<body><script/>x &amp; y</body>"
    }
  },
  "truncatedStartTag": {
    "html": "<div id=\"app\">Loading</div><div class=\"x",
    "expected": {
      "title": "",
      "visibleText": "Loading",
      "noscriptText": "",
      "scriptRatio": 0,
      "scriptCount": 0,
      "bodyElementCount": 1,
      "linkCount": 0,
      "emptyMountIds": [
        "app"
      ],
      "dataFieldCount": 0,
      "markupLower": "<div id=\"app\">loading</div><div class=\"x"
    }
  },
  "unfinishedAtEnd": {
    "html": "<p>a &amp; b</p></\"c &amp; d",
    "expected": {
      "title": "",
      "visibleText": "a & b \"c &amp; d",
      "noscriptText": "",
      "scriptRatio": 0,
      "scriptCount": 0,
      "bodyElementCount": 1,
      "linkCount": 0,
      "emptyMountIds": [],
      "dataFieldCount": 0,
      "markupLower": "<p>a &amp; b</p></\"c &amp; d"
    }
  },
  "mountCounting": {
    "html": "<div id=\"root\"><p>word word word word word word word word word word word word word word word word word word word word </p><span id=\"inner\">hi</span></div><div id=\"app\"> Loading… </div>",
    "expected": {
      "title": "",
      "visibleText": "word word word word word word word word word word word word word word word word word word word word hi Loading…",
      "noscriptText": "",
      "scriptRatio": 0,
      "scriptCount": 0,
      "bodyElementCount": 4,
      "linkCount": 0,
      "emptyMountIds": [
        "inner",
        "app"
      ],
      "dataFieldCount": 0,
      "markupLower": "<div id=\"root\"><p>word word word word word word word word word word word word word word word word word word word word </p><span id=\"inner\">hi</span></div><div id=\"app\"> loading… </div>"
    }
  },
  "srcdoc": {
    "html": "<body><p>Before</p><iframe srcdoc=\"<title>Inner</title><style>p{}</style><p>Fish &amp;amp; chips &quot;here&quot;</p><iframe srcdoc='<p>Deeper</p>'></iframe>\">fallback</iframe><iframe src=\"/x\">no</iframe><p>After</p></body>",
    "expected": {
      "title": "",
      "visibleText": "Before Fish & chips \"here\" Deeper After",
      "bodyElementCount": 4,
      "linkCount": 0
    }
  },
  "spans": {
    "html": "<p>x</p><pre>&lt;div class=\"paywall\"&gt;</pre><TEXTAREA>class=\"paywall\"</TEXTAREA><scripts>s</scripts><script>1</script><code>open",
    "expected": {
      "title": "",
      "visibleText": "x <div class=\"paywall\"> class=\"paywall\"sopen",
      "noscriptText": "",
      "scriptRatio": 0.13846153846153847,
      "scriptCount": 1,
      "bodyElementCount": 5,
      "linkCount": 0,
      "emptyMountIds": [],
      "dataFieldCount": 1,
      "markupLower": "<p>x</p><scripts>s</scripts><script>1</script>"
    }
  }
};

const HERE = dirname(fileURLToPath(import.meta.url));
const CORPUS = ['__fixtures__', '__holdout__'].flatMap((dir) =>
  readdirSync(join(HERE, dir))
    .filter((f) => f.endsWith('.html'))
    .map((f) => [`${dir}/${f}`, readFileSync(join(HERE, dir, f), 'utf8')] as const),
);

describe('extractPageFeatures', () => {
  for (const [name, { html, expected }] of Object.entries(CASES)) {
    it(`measures ${name} as the decoded DOM does`, () => {
      expect(extractPageFeatures(html)).toMatchObject(expected);
      expect(extractPageFeatures(html, { publicParserOnly: true })).toMatchObject(expected);
      expect(referencePageFeatures(html)).toMatchObject(expected);
    });
  }

  it('measures every page of both validation corpora exactly as the plain DOM walk does, on both paths', () => {
    expect(CORPUS.length).toBeGreaterThan(200);
    for (const [file, html] of CORPUS) {
      const reference = { file, ...referencePageFeatures(html) };
      expect({ file, ...extractPageFeatures(html) }).toEqual(reference);
      expect({ file, ...extractPageFeatures(html, { publicParserOnly: true }) }).toEqual(reference);
    }
  });

  it('finds the private Tokenizer fields the fast path relies on (an htmlparser2 upgrade that moves them fails here)', () => {
    expect(TOKENIZER_INTERNALS_MATCH).toBe(true);
  });

  it('parses with the htmlparser2 and entities cheerio runs, so its events are those cheerio builds its DOM from', () => {
    const fromCore = createRequire(import.meta.url);
    const fromParser = createRequire(fromCore.resolve('htmlparser2'));
    const fromCheerio = createRequire(fromCore.resolve('cheerio'));
    const version = (req: NodeJS.Require, name: string) => {
      const entry = req.resolve(name);
      const root = entry.slice(0, entry.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}`.length);
      return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    };
    expect(version(fromCore, 'htmlparser2')).toBe(version(fromCheerio, 'htmlparser2'));
    expect(version(fromCore, 'entities')).toBe(version(fromParser, 'entities'));
  });
});

describe('extractPageFeatures on a page nested past MAX_OPEN_ELEMENTS', () => {
  /** Runs `fn` recording the longest array htmlparser2 unshifts an open element into (each unshift costs its length). */
  function longestUnshift<T>(fn: () => T): { result: T; longest: number; calls: number } {
    let longest = 0;
    let calls = 0;
    const unshift = Array.prototype.unshift;
    const spy = vi.spyOn(Array.prototype, 'unshift').mockImplementation(function (this: unknown[], ...items: unknown[]) {
      calls += 1;
      longest = Math.max(longest, this.length);
      return unshift.apply(this, items);
    });
    try {
      return { result: fn(), longest, calls };
    } finally {
      spy.mockRestore();
    }
  }

  // Unclosed nesting on both sides of each restart: a title, a noscript, a mount candidate and an attribute with an
  // entity opened deep, a <script> whose body holds markup opened at the limit, and text after it all.
  const DEPTH = 1_500;
  const deep = [
    '<html><head><title>Deep &amp; title</title></head><body><div id="app">',
    '<div class="x"><span>t</span>'.repeat(MAX_OPEN_ELEMENTS - 5),
    '<script>document.write("<div><p>not markup</p>")</script>',
    '<noscript><b>enable</b> <i>js</i></noscript>',
    '<section id="s&amp;1"><em>x</em>'.repeat(DEPTH),
    '<p>after &amp; everything</p><a href="/x">link</a>',
  ].join('');

  for (const publicParserOnly of [false, true]) {
    it(`never holds more than MAX_OPEN_ELEMENTS open elements and measures as the DOM does (publicParserOnly: ${publicParserOnly})`, () => {
      const { result, longest, calls } = longestUnshift(() => extractPageFeatures(deep, { publicParserOnly }));
      expect(calls).toBeGreaterThan(DEPTH);
      expect(longest).toBeLessThanOrEqual(MAX_OPEN_ELEMENTS);
      // Nothing here is closed before the end, so the flattened events are those of the nested DOM.
      expect(result).toEqual(referencePageFeatures(deep));
      expect(result).toMatchObject({ title: 'Deep & title', noscriptText: 'enable js', scriptCount: 1, linkCount: 1 });
      expect(result.visibleText.endsWith('x after & everything link')).toBe(true);
      expect(result.emptyMountIds).toContain('s&1');
    });
  }

  it('keeps a hidden element hidden across a restart: text nested deep in <template> stays out', () => {
    const html = `<body><p>shown</p><template>${'<div>'.repeat(3 * MAX_OPEN_ELEMENTS_HIDDEN)}hidden text</template>`;
    const { result, longest } = longestUnshift(() => extractPageFeatures(html));
    expect(longest).toBeLessThanOrEqual(MAX_OPEN_ELEMENTS_HIDDEN);
    expect(result.visibleText).toBe('shown');
    expect(result).toEqual(referencePageFeatures(html));
  });

  it('does not hand the parse over inside a hidden element opened at the limit: its end tag still ends it', () => {
    // html, body and 509 divs: each hidden element below is the 512th open element.
    const html = `<body>${'<div>'.repeat(MAX_OPEN_ELEMENTS - 3)}<noscript><b>js</b></noscript><svg><path/><g><text>icon</text></g></svg><span>real text</span>`;
    const result = extractPageFeatures(html);
    expect(result).toMatchObject({ noscriptText: 'js', visibleText: 'real text' });
    expect(result).toEqual(referencePageFeatures(html));
  });

  it("reads past stray end tags at depth 510 without searching the parser's open elements for each, as the DOM does", () => {
    let scanned = 0;
    const indexOf = Array.prototype.indexOf;
    const page = (stray: string) => `<body><div id="app">${'<div>'.repeat(MAX_OPEN_ELEMENTS - 5)}${stray}<span>after</span>`;
    const strays = ['</x>', '</p>', '</svg>', '</title>', '</img>', '</br>', '</mi>', '</desc>'].join('').repeat(20_000 / 8);
    const spy = vi.spyOn(Array.prototype, 'indexOf').mockImplementation(function (this: unknown[], ...args: [unknown, number?]) {
      scanned += this.length;
      return indexOf.apply(this, args);
    });
    let results: ReturnType<typeof extractPageFeatures>[] = [];
    try {
      results = [extractPageFeatures(page(strays)), extractPageFeatures(page(strays), { publicParserOnly: true })];
    } finally {
      spy.mockRestore();
    }
    expect(scanned).toBeLessThan(2 * 20_000);
    const reference = referencePageFeatures(page(strays));
    expect(reference.visibleText.endsWith('after')).toBe(true);
    for (const result of results) expect(result).toEqual(reference);
  });
});

