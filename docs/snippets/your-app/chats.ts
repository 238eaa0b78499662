// Stand-in for your app's chat store (see README.md here): each conversation kept on the server.
import type { MessageParam } from "anthropic-tool-calling";
export declare function loadChat(chatId: string, userId: string): Promise<MessageParam[] | null>;
export declare function saveChat(chatId: string, messages: MessageParam[]): Promise<void>;
