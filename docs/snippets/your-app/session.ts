// Stand-in for your app's sign-in (see README.md here).
export declare function currentUserId(): Promise<string>;
