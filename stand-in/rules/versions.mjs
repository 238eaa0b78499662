// The API versions (`anthropic-version`) the stand-in speaks, and what the newer one refuses that
// the older one takes: the sampling fields `temperature`, `top_p` and `top_k`; a `document` block
// directly in an assistant message; a text block with non-empty `citations` anywhere in a user
// message (in a `search_result`, a `tool_result`'s content, a document's own content). Documents
// nested in other blocks (a web fetch result the model sent) and `citations: { enabled: true }`
// on documents and search results stay accepted.

import { fail } from '../errors.mjs';
import { isObject } from '../values.mjs';

export const LEGACY_VERSION = '2023-06-01';
/** The version the official SDKs send since their 1.0 (TypeScript 1.0.0). */
export const CURRENT_VERSION = '2026-10-21';
export const API_VERSIONS = [LEGACY_VERSION, CURRENT_VERSION];
export const REMOVED_FIELDS = ['temperature', 'top_p', 'top_k'];

/** Whether `version` made the removals. */
export const hasRemovals = (version) => version === CURRENT_VERSION;

/** The refusal of a version the stand-in does not speak (the real API's words first). */
export function checkVersion(version) {
  const speaks = API_VERSIONS.map((v) => `"${v}"`).join(' and ');
  if (version === undefined) fail(`anthropic-version: header is required (this stand-in speaks ${speaks})`);
  if (!API_VERSIONS.includes(version)) fail(`anthropic-version: "${version}" is not a valid version (this stand-in speaks ${speaks})`);
}

/** The top-level fields `version` takes, from those the older version takes. */
export function topLevelFor(topLevel, version) {
  if (!hasRemovals(version)) return topLevel;
  return new Set([...topLevel].filter((key) => !REMOVED_FIELDS.includes(key)));
}

/** A block an assistant message may not hold directly under `version`. */
export function checkAssistantBlock(block, p, version) {
  if (hasRemovals(version) && block.type === 'document') fail(`${p}: \`document\` blocks can only be in \`user\` messages`);
}

/** Refuses a text block with non-empty citations anywhere in user message `p`'s `blocks`, under `version`. */
export function checkUserCitations(blocks, p, version) {
  if (!hasRemovals(version)) return;
  blocks.forEach((block, m) => {
    const at = cited(block, `${p}.content.${m}`);
    if (at !== null) fail(`${at}.citations: \`citations\` on \`text\` blocks can only be in \`assistant\` messages`);
  });
}

/** Where, within `block` at `p`, a text block with non-empty citations is; null: nowhere. */
function cited(block, p) {
  if (!isObject(block)) return null;
  const within = (items, at) => {
    if (!Array.isArray(items)) return null;
    for (let k = 0; k < items.length; k++) {
      const found = cited(items[k], `${at}.${k}`);
      if (found !== null) return found;
    }
    return null;
  };
  switch (block.type) {
    case 'text':
      return Array.isArray(block.citations) && block.citations.length > 0 ? p : null;
    case 'search_result':
    case 'tool_result':
      return within(block.content, `${p}.content`);
    case 'document':
      return isObject(block.source) ? within(block.source.content, `${p}.source.content.content`) : null;
    default:
      return null;
  }
}
