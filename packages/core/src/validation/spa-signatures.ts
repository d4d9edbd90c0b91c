/**
 * Client-rendered shells by framework, as data. `strong` markers name the framework outright; `mountIds` are the
 * empty elements the framework renders into. A shell is only an SPA when its visible text is under
 * SPA_MAX_VISIBLE_CHARS: a server-rendered Next or Nuxt page carries the same markers and real text.
 */
import { anyOf, tagAttributes, type TextPattern } from './tag-scan.js';

export interface SpaSignature {
  framework: string;
  /** Patterns over the lower-cased HTML. */
  strong: readonly TextPattern[];
  /** Ids of empty body children that mark this framework's mount point. */
  mountIds: readonly string[];
}

/** Visible characters below which an HTML page counts as empty, after scripts, styles and markup are stripped. */
export const SPA_MAX_VISIBLE_CHARS = 200;

/** Ordered: meta-frameworks before the libraries they are built on. */
export const SPA_SIGNATURES: readonly SpaSignature[] = [
  { framework: 'next', strong: [/id=["']__next["']/, /__next_data__/, /\/_next\/static\//, /self\.__next_f/], mountIds: ['__next'] },
  { framework: 'nuxt', strong: [/id=["']__nuxt["']/, /window\.__nuxt__/, /\/_nuxt\//, /__nuxt_data__/], mountIds: ['__nuxt'] },
  { framework: 'gatsby', strong: [/id=["']___gatsby["']/, /gatsby-focus-wrapper/], mountIds: ['___gatsby'] },
  { framework: 'remix', strong: [/window\.__remixcontext/, /__remixmanifest/, /window\.__reactroutercontext/], mountIds: [] },
  { framework: 'svelte', strong: [/__sveltekit/, /data-sveltekit/, /class=["'][^"']{0,300}\bsvelte-[a-z0-9]{4,}/, /\/_app\/immutable\//], mountIds: ['svelte'] },
  // Angular CLI builds load top-level polyfills and main bundles (polyfills-HASH.js/main-HASH.js since v17,
  // polyfills.HASH.js/main.HASH.js before), whatever the root component's selector is.
  { framework: 'angular', strong: [/<app-root\b/, /ng-version=/, /\bng-app\b/, /ng-csp/, /src=["']\/?polyfills([.-][a-z0-9]+)?\.js["'][^<]{0,500}><\/script>\s*<script[^>]{1,500}src=["']\/?main([.-][a-z0-9]+)?\.js["']/], mountIds: [] },
  { framework: 'ember', strong: [/ember-application/, /\/assets\/vendor-[0-9a-f]+\.js/, /name=["'][\w-]+\/config\/environment["']/], mountIds: ['ember-app'] },
  { framework: 'vue', strong: [/data-v-app/, /window\.__vue__|__vue_ssr_context__/, /vue(\.runtime)?(\.global)?(\.prod)?(\.min)?\.js/], mountIds: ['app'] },
  { framework: 'react', strong: [/data-reactroot/, /__react_devtools_global_hook__/, /react-dom(\.production)?(\.min)?\.js|\/react@\d/], mountIds: ['root', 'react-root'] },
  { framework: 'preact', strong: [/preact(\.min)?\.js|\/preact@\d/], mountIds: [] },
  { framework: 'solid', strong: [/_\$hy|solid-js/], mountIds: [] },
  { framework: 'blazor', strong: [/_framework\/blazor\.(webassembly|web|server)\.js/], mountIds: [] },
  { framework: 'elm', strong: [anyOf(/elm\.main\.init\(/, tagAttributes('script', 1, 500, /src=["'][^"']{0,300}\belm(\.min)?\.js/, 'src='))], mountIds: ['elm'] },
  { framework: 'extjs', strong: [/\bext\.(manifest|application)\b|id=["']microloader["']|ext-all(-debug)?\.js/], mountIds: [] },
  { framework: 'meteor', strong: [/__meteor_runtime_config__/, /meteor_js_resource=true/], mountIds: [] },
  { framework: 'flutter', strong: [/flutter\.js|flutter_bootstrap\.js|main\.dart\.js/], mountIds: [] },
];

/** Ids that generic client-rendered apps mount into. */
export const GENERIC_MOUNT_IDS: readonly string[] = ['app', 'root', 'main', 'application', 'container', 'app-root', 'mount', 'wrapper', 'page', 'outlet'];

/** Compound mount ids of the same kind: reactRoot, app-shell, app-container, vue-app, spa-root, main_app… */
export const GENERIC_MOUNT_ID_PATTERN = /^(react|vue|app|spa|main|root|application)[-_]?(root|app|container|shell|mount|main)$/;

/** A body whose first element is an autonomous custom element (<my-app>, <cp-root>): a web-component or Angular root. */
export const CUSTOM_ELEMENT_ROOT = tagAttributes('body', 0, 500, />\s*<([a-z][a-z0-9]*-[a-z0-9-]*)[\s/>]/, '>');

/** A noscript or body text telling the reader to turn JavaScript on. */
export const ENABLE_JS_TEXT = /(enable|turn on|activate|allow) javascript|javascript (is )?(required|disabled|must be enabled|needs to be enabled)|requires javascript|need(s)? javascript|without javascript/i;
