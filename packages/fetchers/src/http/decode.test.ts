import { describe, expect, it } from 'vitest';
import { encodeSingleByte, SAMPLE_TEXTS } from '@crawler/testkit';
import { decodeText, isTextualType, mimeTypeOf, sniffCharset } from './decode.js';

const enc = new TextEncoder();

describe('charset sniffing', () => {
  it('prefers a BOM, then the header, then <meta>, else UTF-8', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode('<meta charset="windows-1251">')]);
    expect(sniffCharset(bom, 'text/html; charset=iso-8859-1')).toBe('utf-8');
    expect(sniffCharset(enc.encode('<meta charset="windows-1251">'), 'text/html; charset="ISO-8859-1"')).toBe('iso-8859-1');
    expect(sniffCharset(enc.encode('<head><meta charset="windows-1251">'), 'text/html')).toBe('windows-1251');
    expect(sniffCharset(enc.encode('<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'), undefined)).toBe('koi8-r');
    expect(sniffCharset(enc.encode('<p>plain</p>'), undefined)).toBe('utf-8');
    // A <meta> read as ASCII cannot be in UTF-16: the HTML standard reads such a page as UTF-8.
    expect(sniffCharset(enc.encode('<meta charset="utf-16"><p>plain</p>'), 'text/html')).toBe('utf-8');
    expect(sniffCharset(enc.encode('<meta http-equiv="Content-Type" content="text/html; charset=UTF-16LE">'), undefined)).toBe('utf-8');
  });

  it('passes over a header charset nothing decodes to the <meta>, as browsers do', () => {
    const page = Uint8Array.from([...enc.encode('<meta charset="shift_jis"><p>'), 0x93, 0xfa, 0x96, 0x7b]);
    expect(sniffCharset(page, 'text/html; charset=bogus')).toBe('shift_jis');
    expect(decodeText(page, sniffCharset(page, 'text/html; charset=bogus'))).toBe('<meta charset="shift_jis"><p>日本');
    expect(sniffCharset(enc.encode('<p>plain</p>'), 'text/html; charset=utf8mb4')).toBe('utf-8');
  });

  it('finds a <meta charset> behind a long inline script in <head>, and an XML declaration in XML', () => {
    const late = Uint8Array.from([...enc.encode(`<html><head><style>${'.a{}'.repeat(2000)}</style><meta charset="gbk"><title>`), 0xd6, 0xd0, 0xce, 0xc4]);
    expect(sniffCharset(late, 'text/html')).toBe('gbk');
    expect(decodeText(late, sniffCharset(late, 'text/html'))).toContain('<title>中文');
    const feed = Uint8Array.from([...enc.encode('<?xml version="1.0" encoding="windows-1251"?><rss><channel><title>'), 0xcf, 0xf0, 0xe8]);
    expect(sniffCharset(feed, 'application/rss+xml')).toBe('windows-1251');
  });

  it('reads a page that declares no charset as windows-1252 when its bytes are not UTF-8, as browsers do', () => {
    const legacy = Uint8Array.from([...enc.encode('<p>'), 0x93, ...enc.encode('Caf'), 0xe9, 0x94, 0x20, 0x80, 0x35]);
    expect(sniffCharset(legacy, 'text/html')).toBe('windows-1252');
    expect(decodeText(legacy, sniffCharset(legacy, 'text/html'))).toBe('<p>“Café” €5');
    expect(sniffCharset(enc.encode('<p>“Café” €5'), 'text/html')).toBe('utf-8');
  });

  it('decodes single-byte charsets and survives unknown labels', () => {
    expect(decodeText(encodeSingleByte(SAMPLE_TEXTS.russian, 'windows-1251'), 'windows-1251')).toBe(SAMPLE_TEXTS.russian);
    expect(decodeText(encodeSingleByte(SAMPLE_TEXTS.russian, 'koi8-r'), 'koi8-r')).toBe(SAMPLE_TEXTS.russian);
    expect(decodeText(enc.encode('héllo'), 'x-no-such-charset')).toBe('héllo');
  });

  it('reads windows-1252, and the iso-8859-1 and us-ascii labels browsers read as it, with its quotes, dashes and euro sign', () => {
    // “Price” – 5€… in windows-1252: Node 20's TextDecoder gave C1 control characters for the bytes 0x80–0x9F.
    const bytes = Uint8Array.from([0x93, ...enc.encode('Price'), 0x94, 0x20, 0x96, 0x20, 0x35, 0x80, 0x85, 0xe9]);
    for (const label of ['windows-1252', 'iso-8859-1', 'ISO-8859-1', 'us-ascii', 'latin1']) expect(decodeText(bytes, label), label).toBe('“Price” – 5€…é');
  });

  it('tells text from binary', () => {
    expect(mimeTypeOf('Text/HTML; charset=utf-8')).toBe('text/html');
    expect(isTextualType('application/xhtml+xml', new Uint8Array())).toBe(true);
    expect(isTextualType('application/pdf', enc.encode('%PDF-1.4'))).toBe(false);
    expect(isTextualType(null, enc.encode('  <!DOCTYPE html><html>'))).toBe(true);
    expect(isTextualType(null, new Uint8Array([0, 1, 2]))).toBe(false);
    // Untyped HTML as the validator sniffs it: behind a UTF-8 BOM, or after a leading comment.
    expect(isTextualType(null, new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode('<!doctype html><html>')]))).toBe(true);
    expect(isTextualType(null, enc.encode('<!-- generated -->\n<!doctype html><html>'))).toBe(true);
  });
});
