import { tagAttributes } from './tag-scan.js';
import { textWeight, type PageFeatures } from './page-features.js';
import {
  CUSTOM_ELEMENT_ROOT,
  ENABLE_JS_TEXT,
  GENERIC_MOUNT_ID_PATTERN,
  GENERIC_MOUNT_IDS,
  SPA_MAX_VISIBLE_CHARS,
  SPA_SIGNATURES,
  type SpaSignature,
} from './spa-signatures.js';

/** An external script: `<script[^>]{1,500}src=`, scanned (tag-scan.ts). */
export const EXTERNAL_SCRIPT = tagAttributes('script', 1, 500, /src=/, 'src=');

export interface SpaVerdict {
  hasSpa: boolean;
  framework: string | null;
}

/**
 * Whether an HTML page is a client-rendered shell. Needs both: little visible text, and evidence that script
 * would fill it (a framework marker, an empty mount point fed by scripts, or an "enable JavaScript" notice).
 * A page with little text and no such evidence is merely empty.
 */
export function detectSpa(page: PageFeatures, signatures: readonly SpaSignature[] = SPA_SIGNATURES): SpaVerdict {
  if (textWeight(page.visibleText) >= SPA_MAX_VISIBLE_CHARS) return { hasSpa: false, framework: null };
  const byMarker = signatures.find((s) => s.strong.some((re) => re.test(page.markupLower)));
  if (byMarker && page.scriptCount > 0) return { hasSpa: true, framework: byMarker.framework };
  if (page.scriptCount === 0) return { hasSpa: false, framework: null };
  const mounts = page.emptyMountIds.map((id) => id.toLowerCase());
  const byMount = signatures.find((s) => s.mountIds.some((id) => mounts.includes(id)));
  if (byMount) return { hasSpa: true, framework: byMount.framework };
  if (mounts.some((id) => GENERIC_MOUNT_IDS.includes(id) || GENERIC_MOUNT_ID_PATTERN.test(id))) return { hasSpa: true, framework: 'generic' };
  if (CUSTOM_ELEMENT_ROOT.test(page.markupLower)) return { hasSpa: true, framework: 'generic' };
  // Apps that render into document.body itself (Mithril, Preact CLI): a body with nothing but scripts, one of them
  // a bundle.
  if (page.bodyElementCount === 0 && page.visibleText.length === 0 && EXTERNAL_SCRIPT.test(page.markupLower)) return { hasSpa: true, framework: 'generic' };
  if (ENABLE_JS_TEXT.test(page.noscriptText) || ENABLE_JS_TEXT.test(page.visibleText)) return { hasSpa: true, framework: 'generic' };
  return { hasSpa: false, framework: null };
}
