/**
 * Walls that escalate in place: the page starts as a check that would clear itself, and its script later rewrites the
 * DOM into a page that never will (a captcha, a refusal) without navigating. No cookie, no reload, no new document.
 * Written for this simulator in the shape of the real pages. The markers that name the final page are assembled by the
 * script, so the served HTML is only the check, as the detectors see it before the script runs.
 */

/**
 * Cloudflare's managed challenge that decides the visitor needs the interactive check: the "Just a moment…" page with
 * `cType: 'managed'` and a spinner in the challenge stage, whose script swaps the spinner for the Turnstile checkbox
 * after `delayMs`. A person ticks it; a browser left alone stays on it. The box is marked as Cloudflare's captcha
 * container (its older captcha page's), which the detectors name: the real Turnstile renders in an iframe inside a
 * closed shadow root, which no read of the DOM sees, and the managed page's static text already asks the visitor to
 * "complete the action below", so a real managed challenge that escalates this way is still judged a check.
 */
export function managedThenCaptchaPage(opts: { host: string; rayId: string; delayMs: number }): string {
  return `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"><meta name="robots" content="noindex,nofollow"></head>
<body><div class="main-wrapper" role="main"><div class="main-content"><h1 class="zone-name-title h1">${opts.host}</h1>
<p id="challenge-text" class="h2 spacer-bottom">Verifying you are human. This may take a few seconds.</p><div id="challenge-stage"><div class="spinner"></div></div>
<div id="challenge-body-text" class="core-msg spacer">${opts.host} needs to review the security of your connection before proceeding.</div></div></div>
<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "${opts.host}",cType: 'managed',cRay: '${opts.rayId}',cFPWv: 'b',cTplV: 5,cTplB: 'cf'};
setTimeout(function(){
  var box = document.createElement('div');
  box.id = 'cf-' + 'captcha-' + 'container';
  box.className = 'cf-' + 'turnstile';
  box.innerHTML = '<label><input type="checkbox"> Verify you are human</label>';
  var stage = document.getElementById('challenge-stage');
  stage.replaceChildren(box);
  document.getElementById('challenge-text').textContent = 'Verify you are human by completing the action below.';
}, ${Math.max(0, Math.floor(opts.delayMs))});
}());</script>
<div class="footer" role="contentinfo"><div class="ray-id">Ray ID: <code>${opts.rayId}</code></div><div id="footer-text">Performance &amp; security by Cloudflare</div></div>
</body></html>`;
}

/**
 * Akamai Bot Manager's interstitial whose check fails: the page that posts its sensor to /_sec/verify, whose script
 * after `delayMs` writes the edge's "Access Denied" (its reference number included) over the whole document.
 */
export function checkThenDenyInPlacePage(opts: { host: string; path: string; reference: string; delayMs: number }): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Please wait</title></head>
<body><p id="msg">Please wait while we check your browser.</p>
<script>(function(){var verify = '/_sec/verify?provider=interstitial';
setTimeout(function(){
  document.title = 'Access ' + 'Denied';
  document.body.innerHTML = '<h1>Access ' + 'Denied</h1>You don' + "'" + 't have perm' + 'ission to access "http&#58;//${opts.host}${opts.path}" on this server.<p>Refer' + 'ence #${opts.reference}</p>';
}, ${Math.max(0, Math.floor(opts.delayMs))});
}());</script></body></html>`;
}
