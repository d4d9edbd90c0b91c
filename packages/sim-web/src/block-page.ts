/**
 * A hard refusal in the shape of Cloudflare's firewall block (error 1020), written for this simulator: the edge's
 * error template, "Sorry, you have been blocked", a Ray ID and the small script that reveals the visitor's address on
 * a click. Nothing on it ever lets the visitor through: no cookie, no reload, no form.
 */
export function blockPage(opts: { host: string; rayId: string }): string {
  return `<!DOCTYPE html>
<html class="no-js" lang="en-US"><head><meta charset="UTF-8"><title>Attention Required! | Cloudflare</title>
<meta name="robots" content="noindex, nofollow"><meta name="viewport" content="width=device-width,initial-scale=1"></head>
<body><div id="cf-wrapper"><div id="cf-error-details" class="cf-error-details-wrapper">
<div class="cf-wrapper cf-header cf-error-overview"><h1>Sorry, you have been blocked</h1><h2 class="cf-subheadline">You are unable to access ${opts.host}</h2></div>
<div class="cf-section cf-wrapper"><h2>Why have I been blocked?</h2><p>This website is using a security service to protect itself from online attacks. The action you just performed triggered the security solution.</p>
<h2>What can I do to resolve this?</h2><p>You can email the site owner to let them know you were blocked. Please include what you were doing when this page came up and the Cloudflare Ray ID found at the bottom of this page.</p></div>
<div class="cf-error-footer cf-wrapper"><p>Cloudflare Ray ID: <strong>${opts.rayId}</strong> &bull; Your IP: <button type="button" id="cf-footer-ip-reveal">Click to reveal</button><span class="hidden" id="cf-footer-ip">127.0.0.1</span> &bull; Performance &amp; security by Cloudflare</p></div>
</div></div>
<script>(function(){var b=document.getElementById('cf-footer-ip-reveal');b&&b.addEventListener('click',function(){b.classList.add('hidden');document.getElementById('cf-footer-ip').classList.remove('hidden')})})();</script>
</body></html>`;
}
