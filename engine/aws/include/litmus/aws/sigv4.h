// AWS Signature Version 4 (header form) on OpenSSL's SHA-256 and HMAC. The pieces (canonical
// request, string to sign, signing key) are exposed so they can be tested against AWS's published
// vectors. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "litmus/aws/credentials.h"
#include "litmus/aws/http.h"

namespace litmus::aws {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// "20150830T123600Z" and "20150830" for `now` (UTC).
std::string AmzDateTime(std::chrono::system_clock::time_point now);

// The canonical request of `request` over every header it carries (names lower-cased and
// sorted, values trimmed with inner runs of spaces collapsed), with the query re-encoded per RFC
// 3986 and sorted by name then value. `payload_hash` is the last line (hex SHA-256 of the body or
// UNSIGNED-PAYLOAD). `signed_headers` receives the "host;x-amz-date" list. `service` "s3" keeps
// the path as given (S3 does not normalise paths); other services normalise "." and ".." and
// repeated slashes and encode the path once more, as AWS's test suite expects.
std::string CanonicalRequest(const HttpRequest& request, std::string_view service,
                             std::string_view payload_hash, std::string* signed_headers);

// "AWS4-HMAC-SHA256\n<amz date>\n<date>/<region>/<service>/aws4_request\n<hex sha256 of canonical>".
std::string StringToSign(std::string_view amz_date, std::string_view region, std::string_view service,
                         std::string_view canonical_request);

// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"), raw bytes.
std::string SigningKey(std::string_view secret_access_key, std::string_view date, std::string_view region,
                       std::string_view service);

// Lower-case hex HMAC-SHA256 of `string_to_sign` under `signing_key`.
std::string SignatureHex(std::string_view signing_key, std::string_view string_to_sign);

// Signs `request` in place: adds Host (from the URL) unless present, x-amz-date,
// x-amz-content-sha256 (real SHA-256 of the body unless the caller set it, e.g. to
// UNSIGNED-PAYLOAD), x-amz-security-token when the credentials carry a session token, and
// Authorization. Any existing Authorization header is replaced.
void SignRequestV4(HttpRequest& request, const Credentials& credentials, std::string_view region,
                   std::string_view service, std::chrono::system_clock::time_point now);

// Copy of `text` with the values of secret-bearing headers and query parameters
// (Authorization, x-amz-security-token, X-Amz-Signature, X-Amz-Credential) replaced by
// "<redacted>". For logs and error messages that quote a request.
std::string RedactSecrets(std::string_view text);

}  // namespace litmus::aws
