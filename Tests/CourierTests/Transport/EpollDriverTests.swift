import CCurl
@testable import Courier
import Glibc
import Testing

/// What an epoll event tells curl: the table of curl's own poll loop (`Curl_socket_check`,
/// `lib/select.c`), where an error or a hang-up on the socket read from counts as readable and
/// on the socket written to as an error. FailureTests' kept-alive cases run it over loopback.
@Suite struct EpollDriverTests {
    private let input = EPOLLIN.rawValue, output = EPOLLOUT.rawValue
    private let error = EPOLLERR.rawValue, hangUp = EPOLLHUP.rawValue

    @Test func readinessPassesAsItCame() {
        #expect(EpollDriver.curlEvents(input, wanted: input) == CURL_CSELECT_IN)
        #expect(EpollDriver.curlEvents(output, wanted: output) == CURL_CSELECT_OUT)
        #expect(EpollDriver.curlEvents(input | output, wanted: input | output) == CURL_CSELECT_IN | CURL_CSELECT_OUT)
    }

    /// Never `CURL_CSELECT_ERR` alone for a socket curl reads from: curl would fail the transfer
    /// with `CURLE_SEND_ERROR` without reading, and not send a request again on a new connection
    /// when the kept-alive one it reused turns out closed.
    @Test func anErrorOrHangUpOnASocketReadFromMakesItReadable() {
        for event in [error, hangUp, error | hangUp, input | error | hangUp] {
            #expect(EpollDriver.curlEvents(event, wanted: input) == CURL_CSELECT_IN)
        }
    }

    @Test func anErrorOrHangUpOnASocketOnlyWrittenToIsAnError() {
        #expect(EpollDriver.curlEvents(error | hangUp, wanted: output) == CURL_CSELECT_ERR)
        #expect(EpollDriver.curlEvents(hangUp, wanted: output) == CURL_CSELECT_ERR)
        #expect(EpollDriver.curlEvents(output | error, wanted: output) == CURL_CSELECT_OUT | CURL_CSELECT_ERR)
    }

    @Test func anErrorOnASocketWatchedBothWaysIsReadableAndAnError() {
        #expect(EpollDriver.curlEvents(error | hangUp, wanted: input | output) == CURL_CSELECT_IN | CURL_CSELECT_ERR)
    }
}
