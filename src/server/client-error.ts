/**
 * Answers requests that Node's HTTP parser rejects before any route sees them (malformed request
 * lines, headers over the size limit, clients slower than the receive timeouts) in the service's
 * error shape `{error: {code, message}}`, instead of Node's bare status line.
 * @module
 */
import { maxHeaderSize, type Server } from 'node:http'
import type { Socket } from 'node:net'
import type { ErrorBody } from './error-response.ts'

interface ParserError extends Error {
  code?: string
}

/** Status, code and message for a parser error (the statuses Node's own handler sends). */
export function clientErrorAnswer(error: ParserError): {
  status: number
  reason: string
  body: ErrorBody
} {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      body: {
        error: {
          code: 'PAYLOAD_TOO_LARGE',
          message: `The request line and headers are larger than this server accepts (${Math.round(maxHeaderSize / 1024)} KiB); shorten the URL or the headers.`,
        },
      },
    }
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      reason: 'Request Timeout',
      body: {
        error: {
          code: 'TIMEOUT',
          message:
            'The request was not received in time (server.headersTimeoutMs, server.requestReceiveTimeoutMs).',
        },
      },
    }
  }
  return {
    status: 400,
    reason: 'Bad Request',
    body: { error: { code: 'INVALID_INPUT', message: 'Malformed HTTP request.' } },
  }
}

/** Installs the handler on `server` (replacing Node's default answer, which has no body). */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: ParserError, socket: Socket) => {
    // As Node's default: answer only when nothing was written to the connection yet, then close.
    if (error.code !== 'ECONNRESET' && socket.writable && socket.bytesWritten === 0) {
      const { status, reason, body } = clientErrorAnswer(error)
      const json = JSON.stringify(body)
      socket.write(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
      )
    }
    socket.destroy()
  })
}
