/**
 * An {@link OutboundFetch} over the global fetch, without the address guard, for tests whose fake
 * servers listen on loopback. Same shape and body cap semantics as src/net/outbound.ts.
 */
import type { OutboundFetch, OutboundResponse } from '../../src/net/outbound.ts';

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

export const plainFetch: OutboundFetch = async (url, init = {}) => {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    ...(init.headers ? { headers: init.headers } : {}),
    ...(init.body === undefined ? {} : { body: init.body }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const maxBytes = init.maxBytes ?? DEFAULT_MAX_BYTES;
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = Buffer.from(value);
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        await reader.cancel();
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  }
  const body = Buffer.concat(chunks);
  const response: OutboundResponse = {
    status: res.status,
    headers: res.headers,
    url: res.url,
    redirected: res.redirected,
    body,
    truncated,
    text: () => body.toString('utf8'),
    json: () => JSON.parse(body.toString('utf8')),
  };
  return response;
};
