import CCurl
import PushCore

extension StreamSlot {
    /// Builds the response for the finished transfer, without the provider's part (the
    /// connection asks the provider's answer parser for it), and frees the slot.
    func finish(result: CURLcode) -> PushResponse? {
        guard let request else { return nil }
        self.request = nil
        var response = PushResponse(request: request)
        var status = 0
        var result = result
        if result == CURLE_OK {
            let rc = easy.responseCode(&status)
            if rc != CURLE_OK { result = rc }
        }
        if result == CURLE_OK, status > 0 {
            response.status = status
            response.durationNanoseconds = easy.totalMicroseconds() * 1000
        } else {
            response.transportFailure = transportFailure(result == CURLE_OK ? CURLE_GOT_NOTHING : result)
        }
        return response
    }

    /// A failure for a transfer removed before it finished (shutdown deadline, a broken multi handle).
    func cancel(_ failure: TransportFailure) -> PushResponse? {
        guard let request else { return nil }
        self.request = nil
        return PushResponse(request: request, transportFailure: failure)
    }

    private func transportFailure(_ code: CURLcode) -> TransportFailure {
        let detail = errorMessage
        let message = detail.isEmpty ? curlMessage(code) : curlMessage(code) + ": " + detail
        return TransportFailure(kind: Self.kind(of: code), code: Int32(code.rawValue), message: message)
    }

    static func kind(of code: CURLcode) -> TransportFailure.Kind {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY: return .connect
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED: return .clientCertificate
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .tls
        case CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING,
             CURLE_PARTIAL_FILE, CURLE_WRITE_ERROR, CURLE_READ_ERROR:
            return .connectionLost
        default: return .other
        }
    }
}
