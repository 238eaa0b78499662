// The two Node globals the snippets use, declared here because the repository does not install
// @types/node; in your app they come from it.
declare const process: {
  env: Record<string, string | undefined>;
  stdout: { write(text: string): boolean };
};
