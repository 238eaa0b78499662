// Prompt caching: a small deterministic model of the cache usage the real API reports.

import { createHash } from 'node:crypto';
import { isObject } from './values.mjs';

/**
 * The cacheable prefix of a request, block by block: the tools, then the system prompt, then the
 * messages' blocks, in that order (as the real API builds it).
 */
function cacheItems(body) {
  const items = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) items.push(tool);
  if (typeof body.system === 'string') items.push({ system: body.system });
  else if (Array.isArray(body.system)) items.push(...body.system);
  for (const m of body.messages) {
    items.push({ role: m.role });
    if (typeof m.content === 'string') items.push({ type: 'text', text: m.content });
    else items.push(...m.content);
  }
  return items;
}

/**
 * Which positions of the prefix are cache breakpoints: a tool, system block or message block with
 * `cache_control`, or the last block when the request has a top-level `cache_control` (automatic
 * caching).
 */
function breakpointsOf(body, items) {
  const at = [];
  items.forEach((item, i) => {
    const marked = isObject(item) && isObject(item.cache_control);
    const automatic = i === items.length - 1 && isObject(body.cache_control);
    if (marked || automatic) at.push(i);
  });
  return at;
}

/**
 * Each position of the prefix: a key (the model and the JSON of everything up to it) and a size
 * (ceil(bytes / 4) tokens).
 */
function cachePositions(body, items) {
  const hash = createHash('sha256').update(String(body.model));
  let bytes = 0;
  return items.map((item) => {
    const json = JSON.stringify(item);
    hash.update(json);
    bytes += Buffer.byteLength(json);
    return { key: hash.copy().digest('hex'), tokens: Math.ceil(bytes / 4) };
  });
}

/** How far back from a breakpoint the real API looks for an earlier cached prefix. */
const CACHE_LOOKBACK = 20;

/**
 * The cache usage of one reply, a small deterministic model; `cache` (a Set of prefix keys) is the
 * server's memory. A hit is a cached prefix ending at a breakpoint or at any of the 20 positions
 * before one (the real API's lookback): `cache_read_input_tokens` is the longest hit's size, and
 * `cache_creation_input_tokens` is the last breakpoint's size minus that. Then each breakpoint's
 * prefix is cached. No breakpoint: both 0. Not modelled: the minimum cacheable length, TTLs (only
 * `reset()` empties the cache).
 */
export function cacheUsage(body, cache) {
  const items = isObject(body) && Array.isArray(body.messages) ? cacheItems(body) : [];
  const breakpoints = breakpointsOf(body, items);
  if (breakpoints.length === 0) return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  // Only now every prefix is hashed: with no breakpoint that work (growing with the history, on
  // every request) would only have answered zeros.
  const positions = cachePositions(body, items);
  let read = 0;
  for (const b of breakpoints) {
    for (let i = Math.max(0, b - CACHE_LOOKBACK); i <= b; i++) {
      if (cache.has(positions[i].key)) read = Math.max(read, positions[i].tokens);
    }
  }
  const creation = positions[breakpoints[breakpoints.length - 1]].tokens - read;
  for (const b of breakpoints) cache.add(positions[b].key);
  return { cache_creation_input_tokens: creation, cache_read_input_tokens: read };
}
