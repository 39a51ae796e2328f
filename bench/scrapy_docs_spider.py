"""Scrapy on one site, for the docs500-scrapy row of bench/crawl.ts (Scrapy pinned by scripts/fixtures/scrapy.sh).

    python bench/scrapy_docs_spider.py ORIGIN OUT.jsonl

Starts at ORIGIN/, follows every same-origin link in an <a href> (HTML only: links to css, js, images, icons
and xml are skipped by extension, as the wget -r row does), parses each page with Scrapy's selector and writes
one JSON line per page (its URL and its title) to OUT.jsonl, as a crawler that stores pages would. On exit
it prints one JSON line to stdout: pages, and the seconds and CPU seconds of this process (all its threads)
from the spider's opening to its closing, i.e. without the interpreter's start-up and Scrapy's imports.

Scrapy's defaults otherwise, except what a fair same-machine comparison needs: robots.txt obeyed (our crawl
reads it too), AutoThrottle off, 8 requests in flight to the host (our fast pace's count), no download delay,
LOG_LEVEL WARNING.

What it does not do that our crawl does, so the comparison is read right: no extraction of the main content
to markdown (boilerplate removal, tables, code blocks), no content hashing or near-duplicate detection, no
canonical-link or noindex handling, no outbound address guard, no sitemap reading, no database writes (items,
fetch records, the job's progress and checkpoints), no per-page job bookkeeping. It parses each page's links
and title and appends a line to a file.
"""

import json
import resource
import sys
import time
from urllib.parse import urldefrag, urlsplit

import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess
from scrapy.http import TextResponse

SKIPPED_EXTENSIONS = (".css", ".js", ".png", ".svg", ".ico", ".xml")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class DocsSpider(scrapy.Spider):
    name = "docs"

    def __init__(self, origin: str, **kwargs):
        super().__init__(**kwargs)
        self.origin = origin.rstrip("/")
        self.pages = 0

    async def start(self):
        # Not start_urls: their requests skip the duplicate filter, so the home page would be fetched
        # again through the first link back to it.
        yield scrapy.Request(f"{self.origin}/", callback=self.parse)

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signal=signals.spider_opened)
        crawler.signals.connect(spider.closed_with_usage, signal=signals.spider_closed)
        return spider

    def opened(self, spider):
        self.started = time.perf_counter()
        self.cpu_at_start = cpu_seconds()

    def closed_with_usage(self, spider, reason):
        usage = {
            "pages": self.pages,
            "crawlSeconds": time.perf_counter() - self.started,
            "crawlCpuSeconds": cpu_seconds() - self.cpu_at_start,
            "reason": reason,
        }
        print(json.dumps(usage), flush=True)

    def same_origin(self, url: str) -> bool:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" == self.origin

    def parse(self, response):
        if not isinstance(response, TextResponse):
            return
        self.pages += 1
        yield {"url": response.url, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            url = urldefrag(response.urljoin(href)).url
            if not self.same_origin(url) or urlsplit(url).path.lower().endswith(SKIPPED_EXTENSIONS):
                continue
            yield response.follow(url, callback=self.parse)


if __name__ == "__main__":
    origin, out = sys.argv[1], sys.argv[2]
    process = CrawlerProcess(
        settings={
            "ROBOTSTXT_OBEY": True,
            "AUTOTHROTTLE_ENABLED": False,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
            "DOWNLOAD_DELAY": 0,
            "LOG_LEVEL": "WARNING",
            "FEEDS": {out: {"format": "jsonlines", "overwrite": True}},
        }
    )
    process.crawl(DocsSpider, origin=origin)
    process.start()
