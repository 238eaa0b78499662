// napi-rs' platform names: the suffix of the `.node` file and the npm/<platform> package.
import { readFileSync } from 'node:fs'

/** The napi platform of a Rust target triple (the ones in napi.targets). */
export function platformOfTarget(triple) {
  const [arch, vendor, os, abi] = triple.split('-')
  const cpu = { x86_64: 'x64', aarch64: 'arm64' }[arch]
  if (!cpu) throw new Error(`unknown architecture in ${triple}`)
  if (vendor === 'apple') return `darwin-${cpu}`
  if (os === 'windows') return `win32-${cpu}-${abi}`
  if (os === 'linux') return `linux-${cpu}-${abi}`
  throw new Error(`unknown target ${triple}`)
}

/** Whether this Linux runs on musl (Alpine) rather than glibc. */
function isMusl() {
  try {
    return process.report.getReport().header.glibcVersionRuntime === undefined
  } catch {
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  }
}

/** This machine's napi platform (`linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`…). */
export function hostPlatform() {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}
