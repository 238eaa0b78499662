// Small checks on parsed JSON values, shared by the rules, the replies and the demo model.

export const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
export const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

/** The content blocks of a message (none when its content is a string). */
export const blocksOf = (m) => (m && Array.isArray(m.content) ? m.content : []);
