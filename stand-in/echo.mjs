// A gateway that echoes the request: `{echo:NAME}` in an error's wire text becomes the request's
// header NAME, so tests can prove the client never repeats a secret a server sent back.

/** `text` with `{echo:NAME}` / `{echo-escaped:NAME}` / `{echo-token:NAME}` replaced from the request's `headers` (see index.mjs). */
export function echoed(text, headers) {
  return text.replace(/\{echo(-escaped|-token)?:([a-z0-9-]+)\}/g, (_, how, name) => {
    const whole = headers[name] === undefined ? '(none)' : String(headers[name]);
    // A gateway that names the token it was sent (cf-aig-authorization style) writes it without its scheme.
    const value = how === '-token' ? whole.trim().split(/\s+/).at(-1) : whole;
    if (how !== '-escaped') return value;
    let out = '';
    for (let i = 0; i < value.length; i++) out += `\\u${value.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}
