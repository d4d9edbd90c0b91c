// Writes the page the zstd fixtures compress to stdout: 150,241 bytes of deterministic HTML (words, links, markup),
// which compresses about as much as a real article page. See README.md beside this file.
const words = 'the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part'.split(' ');
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
let html = '<!DOCTYPE html><html><head><title>Typical page</title><link rel="stylesheet" href="/s.css"></head><body><nav><ul>' + Array.from({ length: 40 }, (_, i) => `<li><a href="/section/${i}/index.html" class="nav-link">Section ${i}</a></li>`).join('') + '</ul></nav><main>';
while (html.length < 150_000) {
  const n = 20 + Math.floor(rnd() * 60);
  html += `<div class="para-${Math.floor(rnd() * 9)}"><p>` + Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]).join(' ') + `. <a href="/article/${Math.floor(rnd() * 100000)}">read more</a></p></div>\n`;
}
html += '</main></body></html>';
process.stdout.write(html);
