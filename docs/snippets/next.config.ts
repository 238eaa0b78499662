// next.config.ts: leave the native addon to Node's own require on the server.
const nextConfig = {
  serverExternalPackages: ["anthropic-tool-calling"],
};
export default nextConfig;
