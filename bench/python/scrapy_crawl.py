#!/usr/bin/env python3
"""The Python peer that keeps its pages: Scrapy (Debian's python3-scrapy) as a team would run it, every page to a
JSON-lines feed (url, status, title, body). Same fairness rules as the Node references: a fixed concurrency, no
per-domain delay, robots.txt off, one retry, the same digest (title, absolute http(s) links, body text length).

    /usr/bin/python3 bench/python/scrapy_crawl.py <urls-file> --concurrency 32 --feed /tmp/pages.jsonl

Prints one JSON line with the measurement (the Node references' shape) and exits.
"""
import argparse
import json
import resource
import time
from urllib.parse import urljoin

import scrapy
from scrapy.crawler import CrawlerProcess


class Totals:
    ok = 0
    failed = 0
    links = 0
    text_chars = 0


class PagesSpider(scrapy.Spider):
    name = "pages"

    def __init__(self, urls, totals, **kwargs):
        super().__init__(**kwargs)
        self.urls = urls
        self.totals = totals

    def start_requests(self):
        for url in self.urls:
            yield scrapy.Request(url, callback=self.parse, errback=self.failed, dont_filter=True)

    def parse(self, response):
        links = 0
        for href in response.css("a[href]::attr(href)").getall():
            u = urljoin(response.url, href.strip())
            if u.startswith("http://") or u.startswith("https://"):
                links += 1
        text = "".join(response.xpath("//body//text()").getall())
        self.totals.ok += 1
        self.totals.links += links
        self.totals.text_chars += len(text)
        yield {
            "url": response.url,
            "status": response.status,
            "title": (response.css("title::text").get() or "").strip(),
            "body": response.text,
        }

    def failed(self, failure):
        self.totals.failed += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--feed", required=True)
    args = parser.parse_args()
    with open(args.file, encoding="utf-8") as f:
        urls = [line.strip() for line in f if line.strip()]
    totals = Totals()
    process = CrawlerProcess(
        settings={
            "LOG_LEVEL": "WARNING",
            "CONCURRENT_REQUESTS": args.concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
            "CONCURRENT_REQUESTS_PER_IP": 0,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": False,
            "RETRY_TIMES": 1,
            "COOKIES_ENABLED": True,
            "TELNETCONSOLE_ENABLED": False,
            "FEEDS": {args.feed: {"format": "jsonlines", "encoding": "utf8", "overwrite": True}},
            # Scrapy 2.8 warns about this default changing; the value only affects request fingerprints.
            "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        }
    )
    t0 = time.monotonic()
    cpu0 = time.process_time()
    process.crawl(PagesSpider, urls=urls, totals=totals)
    process.start()
    elapsed_ms = (time.monotonic() - t0) * 1000
    print(
        json.dumps(
            {
                "name": "scrapy",
                "okPages": totals.ok,
                "failedPages": totals.failed,
                "links": totals.links,
                "textChars": totals.text_chars,
                "elapsedMs": elapsed_ms,
                "cpuMs": (time.process_time() - cpu0) * 1000,
                "peakRssBytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            }
        )
    )


if __name__ == "__main__":
    main()
