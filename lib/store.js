'use strict'
// createStore: a database the package keeps (SQLite by default, PostgreSQL for a fleet), reached
// through the Rust engine off the JS thread. This layer checks arguments, names the default file
// and gives a store's failures the code `store_unavailable`.

const { randomBytes } = require('node:crypto')
const path = require('node:path')
const binding = require('../binding.js')
const { describe } = require('./describe.js')
const { toUIMessages } = require('./thread-ui.js')

const MAX_ID = 200
const MAX_METADATA = 16 * 1024

/** An Error a store operation rejects with: `code` is `store_unavailable`. */
function unavailable(e) {
  const error = new Error(e && typeof e.message === 'string' ? e.message : String(e))
  error.code = 'store_unavailable'
  return error
}

function checkId(id, where) {
  if (typeof id !== 'string' || id.length < 1 || id.length > MAX_ID) {
    throw new TypeError(`${where}: a thread id must be a string of 1 to ${MAX_ID} characters, got ${describe(id, { quote: true })}`)
  }
  return id
}

/** The owner as stored: `""` for none. */
function ownerOf(options, where) {
  const owner = options === undefined || options === null ? undefined : options.owner
  if (owner === undefined || owner === null) return ''
  if (typeof owner !== 'string' || owner.length < 1 || owner.length > MAX_ID) {
    throw new TypeError(`${where}: owner must be a string of 1 to ${MAX_ID} characters, got ${describe(owner, { quote: true })}`)
  }
  return owner
}

function checkOptions(options, where) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw new TypeError(`${where}: options must be an object, got ${describe(options, { quote: true })}`)
  }
  return options ?? {}
}

function metadataJson(metadata, where) {
  if (metadata === undefined || metadata === null) return '{}'
  if (typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new TypeError(`${where}: metadata must be a plain object, got ${describe(metadata, { quote: true })}`)
  }
  let json
  try {
    json = JSON.stringify(metadata)
  } catch (e) {
    throw new TypeError(`${where}: metadata cannot be turned into JSON: ${e.message}`)
  }
  if (Buffer.byteLength(json) > MAX_METADATA) throw new TypeError(`${where}: metadata is over ${MAX_METADATA / 1024} KiB of JSON`)
  return json
}

const iso = (ms) => new Date(ms).toISOString()

class Store {
  #native

  constructor(native) {
    this.#native = native
  }

  /** What a run's `store` option sends for `store` (undefined for anything but a Store). */
  static handleOf(store) {
    return store instanceof Store ? store.#native.handle : undefined
  }

  /** The native store (for lib/stream: recording and following a run's stream). */
  static nativeOf(store) {
    return store instanceof Store ? store.#native : undefined
  }

  /** The URL, without its password or query. */
  get url() {
    return this.#native.quoted
  }

  /** Makes a thread with a random id (128 bits), bound to `owner` if given; resolves with its id. */
  async createThread(options) {
    const o = checkOptions(options, 'createThread')
    const owner = ownerOf(o, 'createThread')
    const metadata = metadataJson(o.metadata, 'createThread')
    for (;;) {
      const id = `thread_${randomBytes(16).toString('hex')}`
      let inserted
      try {
        inserted = await this.#native.insertThread(id, owner, metadata)
      } catch (e) {
        throw unavailable(e)
      }
      if (inserted) return id
    }
  }

  /** The thread, or null when there is none that `owner` may see. */
  async getThread(id, options) {
    checkId(id, 'getThread')
    const owner = ownerOf(checkOptions(options, 'getThread'), 'getThread')
    let json
    try {
      json = await this.#native.getThread(id, owner)
    } catch (e) {
      throw unavailable(e)
    }
    if (json === null) return null
    const t = JSON.parse(json)
    const pendingApprovals = Array.isArray(t.pendingApprovals) ? t.pendingApprovals : []
    return {
      id: t.id,
      owner: t.owner,
      metadata: t.metadata,
      messages: t.messages,
      uiMessages: toUIMessages(t.messages, pendingApprovals),
      pendingApprovals,
      status: t.status,
      activeRunId: t.activeRunId,
      createdAt: iso(t.createdAt),
      updatedAt: iso(t.updatedAt),
    }
  }

  /** The owner's threads (without one: those bound to none), the most recently updated first. */
  async listThreads(options) {
    const o = checkOptions(options, 'listThreads')
    const owner = ownerOf(o, 'listThreads')
    const limit = o.limit ?? 50
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new TypeError(`listThreads: limit must be an integer from 1 to 1000, got ${describe(limit, { quote: true })}`)
    }
    const before = o.before === undefined || o.before === null ? undefined : checkId(o.before, 'listThreads')
    let json
    try {
      json = await this.#native.listThreads(owner, limit, before)
    } catch (e) {
      throw unavailable(e)
    }
    return JSON.parse(json).map((t) => ({ ...t, createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt) }))
  }

  /** Deletes a thread; whether there was one that `owner` may see. */
  async deleteThread(id, options) {
    checkId(id, 'deleteThread')
    const owner = ownerOf(checkOptions(options, 'deleteThread'), 'deleteThread')
    try {
      return await this.#native.deleteThread(id, owner)
    } catch (e) {
      throw unavailable(e)
    }
  }

  /** Stops run `runId` wherever it runs (at once if nobody holds it); whether it was going on. */
  async stopRun(runId, owner) {
    try {
      return await this.#native.stopRun(runId, owner ?? undefined)
    } catch (e) {
      throw unavailable(e)
    }
  }

  /** The ids of the runs whose lease ran out (their process stopped), at most `limit`. */
  async expiredRuns(limit) {
    try {
      return await this.#native.expiredRuns(limit)
    } catch (e) {
      throw unavailable(e)
    }
  }

  /** Ends the store's connections. */
  async close() {
    await this.#native.close()
  }
}

/**
 * A store for `url`: `"sqlite:<path>"`, `"sqlite::memory:"` or `"postgres://…"`. Without one:
 * `ANTHROPIC_TOOL_CALLING_STORE`, else `sqlite:.anthropic-tool-calling/store.db` under the working
 * directory. Returns at once; connects at first use. A malformed URL throws a TypeError.
 */
function createStore(url, options) {
  const o = checkOptions(options, 'createStore')
  let chosen = url ?? process.env.ANTHROPIC_TOOL_CALLING_STORE
  if (chosen === undefined || chosen === '') chosen = `sqlite:${path.join(process.cwd(), '.anthropic-tool-calling', 'store.db')}`
  if (typeof chosen !== 'string') throw new TypeError(`createStore: the URL must be a string, got ${describe(chosen, { quote: true })}`)
  const max = o.maxConnections
  if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > 1000)) {
    throw new TypeError(`createStore: maxConnections must be an integer from 1 to 1000, got ${describe(max, { quote: true })}`)
  }
  const lease = o.leaseMs
  if (lease !== undefined && (!Number.isInteger(lease) || lease < 100 || lease > 3_600_000)) {
    throw new TypeError(`createStore: leaseMs must be an integer from 100 to 3600000, got ${describe(lease, { quote: true })}`)
  }
  const retention = o.streamRetentionMs
  if (retention !== undefined && (!Number.isInteger(retention) || retention < 0 || retention > 86_400_000)) {
    throw new TypeError(`createStore: streamRetentionMs must be an integer from 0 to 86400000 (a day), got ${describe(retention, { quote: true })}`)
  }
  let native
  try {
    native = new binding.NativeStore(chosen, max, lease, retention)
  } catch (e) {
    throw new TypeError(e.message)
  }
  return new Store(native)
}

const handleOf = (store) => Store.handleOf(store)

module.exports = { createStore, Store, handleOf, checkId, ownerOf, unavailable }
