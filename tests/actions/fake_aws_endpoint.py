#!/usr/bin/env python3
"""A local SageMaker + SNS + EventBridge endpoint for litmus's action and event tests
(tests/actions/actions_e2e_test.cc, tests/events/events_e2e_test.cc).

Listens on 127.0.0.1 (an OS-chosen port, written to --port-file once listening) and answers the
calls rule actions make: SageMaker over JSON 1.1 (ListTrainingJobs, StopTrainingJob) and SNS over
the query protocol (CreateTopic, ListSubscriptions, Subscribe, Publish), and EventBridge's
PutEvents over JSON 1.1 (X-Amz-Target: AWSEvents.PutEvents, signing name "events").

Every request's SigV4 signature is checked independently of litmus's signer: botocore's
SigV4Auth recomputes it from the received method, URL, signed headers and timestamp with the
expected secret, and the body must hash to x-amz-content-sha256. The credential scope must name
the expected access key and region, and the service that matches the protocol ("sagemaker" for
X-Amz-Target: SageMaker.*, "events" for AWSEvents.*, "sns" for a form with Action=). A bad signature is answered 403
SignatureDoesNotMatch.

Every call is appended to --record (a JSON list, rewritten atomically after each call):
{"service", "operation", "params", "signature_ok", "signature_error", "status"}.

Behaviour options: --training-jobs (in-progress job names; ListTrainingJobs filters them with
NameContains like SageMaker and pages them --jobs-page-size at a time), --fail-with STATUS (answer
every call with that HTTP status and an AWS error body, after recording it), --fail-first N with
--fail-first-status and --fail-first-code (only the first N calls fail so, e.g. 500 InternalFailure
or 400 ThrottlingException), --fail-entries-first N (the first N PutEvents calls answer 200 with
FailedEntryCount 1: the last entry failed with ThrottlingException). ListSubscriptions
answers two pages: an unrelated subscription with a NextToken, then the subscriptions made so far.

Needs python3-botocore (scripts/install-deps.sh). Runs until killed.
"""

import argparse
import hashlib
import json
import os
import threading
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

ACCOUNT = "123456789012"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port-file", required=True)
    p.add_argument("--record", required=True)
    p.add_argument("--access-key", default="TESTKEY")
    p.add_argument("--secret-key", default="TESTSECRET")
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--training-jobs", default="", help="comma-separated in-progress training job names")
    p.add_argument("--jobs-page-size", type=int, default=1)
    p.add_argument("--fail-with", type=int, default=0, help="answer every call with this HTTP status")
    p.add_argument("--fail-first", type=int, default=0, help="answer the first N calls with an error")
    p.add_argument("--fail-first-status", type=int, default=500)
    p.add_argument("--fail-first-code", default="InternalFailure")
    p.add_argument("--fail-entries-first", type=int, default=0,
                   help="the first N PutEvents calls fail their last entry (ThrottlingException)")
    return p.parse_args()


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.calls = []
        self.subscriptions = []  # (protocol, endpoint, topic_arn)
        self.jobs = [j for j in args.training_jobs.split(",") if j]
        self.calls_seen = 0
        self.put_events_seen = 0

    def record(self, call):
        with self.lock:
            self.calls.append(call)
            tmp = self.args.record + ".tmp"
            with open(tmp, "w") as f:
                json.dump(self.calls, f, indent=1)
            os.replace(tmp, self.args.record)


def check_signature(args, method, path, headers, body, service):
    """Returns "" if the request is signed correctly for `service`, else why not."""
    auth = headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return "no AWS4-HMAC-SHA256 Authorization header"
    fields = {}
    for part in auth[len("AWS4-HMAC-SHA256 "):].split(","):
        key, _, value = part.strip().partition("=")
        fields[key] = value
    try:
        access_key, date, region, scope_service, terminator = fields["Credential"].split("/")
        signed = fields["SignedHeaders"].split(";")
        signature = fields["Signature"]
    except (KeyError, ValueError):
        return "malformed Authorization header"
    if access_key != args.access_key:
        return "unknown access key"
    if region != args.region:
        return "credential scope region %s, expected %s" % (region, args.region)
    if scope_service != service:
        return "credential scope service %s, expected %s" % (scope_service, service)
    if terminator != "aws4_request":
        return "credential scope does not end in aws4_request"
    amz_date = headers.get("X-Amz-Date", "")
    if not amz_date.startswith(date):
        return "x-amz-date %r does not match the scope date %s" % (amz_date, date)
    for required in ("host", "x-amz-date"):
        if required not in signed:
            return "%s is not signed" % required
    content_sha = headers.get("X-Amz-Content-SHA256")
    if content_sha is not None:
        if "x-amz-content-sha256" not in signed:
            return "x-amz-content-sha256 is not signed"
        if content_sha != hashlib.sha256(body).hexdigest():
            return "x-amz-content-sha256 does not match the body"
    request = AWSRequest(method=method, url="http://%s%s" % (headers.get("Host", ""), path), data=body,
                         headers={name: headers.get(name, "") for name in signed})
    request.context["timestamp"] = amz_date
    signer = SigV4Auth(Credentials(args.access_key, args.secret_key, headers.get("X-Amz-Security-Token")),
                       service, args.region)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != signature:
        return "signature mismatch"
    return ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set in main

    def log_message(self, *unused):
        pass  # quiet: the record file tells what happened

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        target = self.headers.get("X-Amz-Target", "")
        if target.startswith("SageMaker.") or target.startswith("AWSEvents."):
            prefix, _, operation = target.partition(".")
            service = "sagemaker" if prefix == "SageMaker" else "events"
            try:
                params = json.loads(body or b"{}")
            except ValueError:
                params = {"<unparsable>": body.decode("utf-8", "replace")}
        else:
            form = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            params = {k: v[0] for k, v in form.items()}
            service, operation = "sns", params.pop("Action", "")
        args = self.state.args
        call = {"service": service, "operation": operation, "params": params}
        error = check_signature(args, self.command, self.path, self.headers, body, service)
        call["signature_ok"] = not error
        call["signature_error"] = error
        if error:
            status, answer = self.error(service, 403, "SignatureDoesNotMatch",
                                        "The request signature we calculated does not match (%s)" % error)
        elif args.fail_with:
            status, answer = self.error(service, args.fail_with, "InternalFailure", "injected failure")
        elif self.take("calls_seen", args.fail_first):
            status, answer = self.error(service, args.fail_first_status, args.fail_first_code, "injected failure")
        elif service == "events":
            status, answer = self.events(operation, params)
        elif service == "sagemaker":
            status, answer = self.sagemaker(operation, params)
        else:
            status, answer = self.sns(operation, params)
        call["status"] = status
        self.state.record(call)
        data = answer.encode()
        self.send_response(status)
        self.send_header("Content-Type",
                         "text/xml" if service == "sns" else "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def take(self, counter, limit):
        """True for the first `limit` calls counted by `counter`."""
        with self.state.lock:
            seen = getattr(self.state, counter)
            setattr(self.state, counter, seen + 1)
            return seen < limit

    def events(self, operation, params):
        if operation != "PutEvents":
            return self.error("events", 400, "UnknownOperationException", operation)
        entries = params.get("Entries", [])
        if not entries or len(entries) > 10:
            return self.error("events", 400, "ValidationException", "1 to 10 entries")
        results = [{"EventId": str(uuid.uuid4())} for _ in entries]
        failed = 0
        if self.take("put_events_seen", self.state.args.fail_entries_first):
            results[-1] = {"ErrorCode": "ThrottlingException", "ErrorMessage": "injected entry failure"}
            failed = 1
        return 200, json.dumps({"FailedEntryCount": failed, "Entries": results})

    @staticmethod
    def error(service, status, code, message):
        if service != "sns":
            return status, json.dumps({"__type": code, "message": message})
        return status, ("<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error>"
                        "<RequestId>r</RequestId></ErrorResponse>" % (code, message))

    def sagemaker(self, operation, params):
        jobs = self.state.jobs
        if operation == "ListTrainingJobs":
            contains = params.get("NameContains", "").lower()
            matching = [j for j in jobs if contains in j.lower()]
            start = int(params.get("NextToken", "0"))
            size = self.state.args.jobs_page_size
            answer = {"TrainingJobSummaries": [
                {"TrainingJobName": j, "TrainingJobArn": "arn:aws:sagemaker:%s:%s:training-job/%s"
                 % (self.state.args.region, ACCOUNT, j), "TrainingJobStatus": "InProgress",
                 "CreationTime": 1700000000.0} for j in matching[start:start + size]]}
            if start + size < len(matching):
                answer["NextToken"] = str(start + size)
            return 200, json.dumps(answer)
        if operation == "StopTrainingJob":
            if params.get("TrainingJobName") not in jobs:
                return self.error("sagemaker", 400, "ValidationException", "Requested resource not found.")
            return 200, "{}"
        return self.error("sagemaker", 400, "UnknownOperationException", operation)

    def sns(self, operation, params):
        def wrap(result):
            return 200, ('<{0}Response xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><{0}Result>{1}</{0}Result>'
                         '<ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></{0}Response>'
                         .format(operation, result))
        region = self.state.args.region
        if operation == "CreateTopic":
            return wrap("<TopicArn>arn:aws:sns:%s:%s:%s</TopicArn>" % (region, ACCOUNT, params.get("Name", "")))
        if operation == "ListSubscriptions":
            def member(protocol, endpoint, topic):
                return ("<member><TopicArn>%s</TopicArn><Protocol>%s</Protocol><SubscriptionArn>%s:1</SubscriptionArn>"
                        "<Owner>%s</Owner><Endpoint>%s</Endpoint></member>" % (topic, protocol, topic, ACCOUNT,
                                                                             endpoint))
            if params.get("NextToken") != "page-2":
                other = member("email", "someone@example.com", "arn:aws:sns:%s:%s:Other" % (region, ACCOUNT))
                return wrap("<Subscriptions>%s</Subscriptions><NextToken>page-2</NextToken>" % other)
            with self.state.lock:
                members = "".join(member(*s) for s in self.state.subscriptions)
            return wrap("<Subscriptions>%s</Subscriptions>" % members)
        if operation == "Subscribe":
            with self.state.lock:
                self.state.subscriptions.append((params.get("Protocol"), params.get("Endpoint"),
                                                 params.get("TopicArn")))
            return wrap("<SubscriptionArn>pending confirmation</SubscriptionArn>")
        if operation == "Publish":
            return wrap("<MessageId>%s</MessageId>" % uuid.uuid4())
        return self.error("sns", 400, "InvalidAction", operation)


def main():
    args = parse_args()
    Handler.state = State(args)
    with open(args.record, "w") as f:
        f.write("[]")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
