// Stand-in for your app's rendering (see README.md here).
export declare function render(...values: unknown[]): void;
