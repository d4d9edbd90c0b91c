/** A news-style article with navigation, ads and a footer around it: what Readability has to see through. */
export const ARTICLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tidal power in the Bay of Fundy | The Coastal Review</title>
<style>.ad{color:red}</style><script>window.tracking = 1;</script></head>
<body>
<header><nav><a href="/">Home</a> · <a href="/energy">Energy</a> · <a href="/subscribe">Subscribe</a></nav></header>
<aside class="ad sidebar">Buy our newsletter! <a href="/promo">Promo</a></aside>
<main><article>
<h1>Tidal power in the Bay of Fundy</h1>
<p class="byline">By Ada Marsh</p>
<p>The Bay of Fundy has the highest tides in the world, rising and falling by as much as sixteen metres twice a day.
Engineers have tried for decades to turn that motion into electricity, and the latest turbines finally seem to survive it.</p>
<h2>Why the tides are so high</h2>
<p>The bay's length happens to match the period of the Atlantic tide, so the water sloshes in resonance, like a child
on a swing pushed at the right moment. The <a href="/science/resonance">resonance explainer</a> goes into the physics.</p>
<p>Measurements from the <a href="https://www.example.org/tides/station-42">tide gauge at station 42</a> show a mean range
of 11.7 metres at Burntcoat Head, the largest recorded anywhere on Earth.</p>
<h2>What the turbines must survive</h2>
<p>Currents reach five metres per second. Earlier designs lost blades within weeks; sediment scoured their bearings and
the sheer force of the water bent their shafts. The new designs sit on the seabed and turn slowly.</p>
<ul><li>Slower rotors, less cavitation</li><li>Sealed bearings</li><li>Remote monitoring of every blade</li></ul>
<h3>The cost question</h3>
<p>Electricity from the bay still costs three times as much as from wind farms onshore, according to the operator's
latest filing, but the tide, unlike the wind, arrives on a timetable known years ahead.</p>
</article></main>
<footer><p>© The Coastal Review · <a href="/privacy">Privacy</a></p></footer>
</body></html>`;
