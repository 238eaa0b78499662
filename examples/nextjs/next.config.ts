import type { NextConfig } from 'next'

const nextConfig: NextConfig = {
  // anthropic-tool-calling is a native addon: its binding.js `require`s a prebuilt `.node` binary
  // (from the anthropic-tool-calling-linux-x64-gnu package). A bundler cannot bundle a `.node`
  // file, so leave the package to Node's own `require` at run time, as Next.js already does for
  // better-sqlite3.
  serverExternalPackages: ['anthropic-tool-calling'],
  // This app lives inside the package's repository: keep Next.js from taking the repository
  // (another lockfile) for the project root.
  turbopack: { root: __dirname },
  outputFileTracingRoot: __dirname,
}

export default nextConfig
