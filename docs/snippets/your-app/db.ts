// Stand-in for your app's database access (see README.md here).
export interface Order { id: string; status: "processing" | "shipped" | "delivered"; deliveredAt: Date | null }
export declare const db: {
  orders: { find(id: string): Promise<Order | null> }
}
