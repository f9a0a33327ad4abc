// The package's `exports` map only has "node" and "browser" conditions, which TypeScript's
// Bundler resolution does not pick, so the part of the browser entry this client uses is
// declared here. Vite resolves the real module with the "browser" condition.
declare module "@fails-components/webtransport" {
  export interface WebTransportCloseInfo {
    closeCode?: number;
    reason?: string;
  }
  export interface WebTransportBidirectionalStream {
    readonly readable: ReadableStream<Uint8Array>;
    readonly writable: WritableStream<Uint8Array>;
  }
  export interface WebTransportOptions {
    serverCertificateHashes?: { algorithm: string; value: BufferSource }[];
  }
  /** Native WebTransport when it works, else WebTransport over the WebSocket mapping. */
  export class WebTransportPolyfill {
    constructor(url: string, options?: WebTransportOptions);
    /** "native" or "websocket". */
    readonly curtype: string;
    readonly ready: Promise<unknown>;
    readonly closed: Promise<WebTransportCloseInfo | undefined>;
    close(info?: WebTransportCloseInfo): void;
    createBidirectionalStream(): Promise<WebTransportBidirectionalStream>;
  }
  /** WebTransport over the WebSocket mapping only. */
  export class WebTransportPonyfill {
    constructor(url: string, options?: WebTransportOptions);
    readonly ready: Promise<unknown>;
    readonly closed: Promise<WebTransportCloseInfo | undefined>;
    close(info?: WebTransportCloseInfo): void;
    createBidirectionalStream(): Promise<WebTransportBidirectionalStream>;
  }
}
