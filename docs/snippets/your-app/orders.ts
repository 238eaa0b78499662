// Stand-in for your app's order logic (see README.md here).
import type { Order } from "./db";
export declare function findOrder(id: string): Order | null;
export declare function isKnownOrder(id: string): boolean;
export declare function daysSince(date: Date): number;
export declare function createReturn(orderId: string, options: { idempotencyKey: string }): Promise<{ returnId: string }>;
export declare function startReturn(orderId: string, reason: string): Promise<{ returnId: string }>;
export declare function labelPng(orderId: string): Promise<string>;
