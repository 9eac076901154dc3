package awsbackend

import (
	"errors"
	"fmt"
	"net"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Resource names the AWS resource an operation touched, for error messages.
type Resource struct {
	Service string // "dynamodb" or "s3"
	Kind    string // "table" or "bucket"
	Name    string // table or bucket name
	Region  string
}

func (r Resource) String() string {
	s := fmt.Sprintf("%s %s %q", r.Service, r.Kind, r.Name)
	if r.Region != "" {
		s += " in " + r.Region
	}
	return s
}

func (r Resource) endpointVar() string {
	if r.Service == "dynamodb" {
		return "AWS_ENDPOINT_URL_DYNAMODB"
	}
	return "AWS_ENDPOINT_URL_S3"
}

// ErrorCode returns the AWS error code of err ("ConditionalCheckFailedException",
// "PreconditionFailed", "NoSuchKey", ...) or "".
func ErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// HTTPStatus returns the HTTP status of the response that produced err, or 0.
func HTTPStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	var sre *smithyhttp.ResponseError
	if errors.As(err, &sre) {
		return sre.HTTPStatusCode()
	}
	return 0
}

// IsPreconditionFailed reports whether err is S3's answer to a failed
// If-Match / If-None-Match: 412 PreconditionFailed, or 409
// ConditionalRequestConflict (a concurrent conditional write won).
func IsPreconditionFailed(err error) bool {
	c := ErrorCode(err)
	return c == "PreconditionFailed" || c == "ConditionalRequestConflict" || HTTPStatus(err) == 412
}

// IsNotFound reports whether err says the object or item does not exist.
func IsNotFound(err error) bool {
	switch ErrorCode(err) {
	case "NoSuchKey", "NotFound":
		return true
	}
	return false
}

var credentialCodes = map[string]bool{
	"UnrecognizedClientException": true, "InvalidClientTokenId": true, "InvalidAccessKeyId": true,
	"SignatureDoesNotMatch": true, "ExpiredToken": true, "ExpiredTokenException": true,
	"MissingAuthenticationToken": true, "MissingAuthenticationTokenException": true,
	"InvalidSignatureException": true, "IncompleteSignature": true,
}

var deniedCodes = map[string]bool{
	"AccessDenied": true, "AccessDeniedException": true, "Forbidden": true, "AllAccessDisabled": true,
}

// Classify rewrites the errors a user can fix into one message naming res and
// the fix, wrapping err (%w) so callers can still inspect it:
//
//	dynamodb table "x" not found in us-east-1: run `deployer backend init` ...
//	s3 bucket "b" not found: ...
//	access to dynamodb table "x" ... denied ...: check credentials / IAM policy
//	cannot reach s3 bucket "b": ... check the network and AWS_ENDPOINT_URL_S3
//
// Other errors are returned wrapped with the resource name. nil stays nil.
func Classify(err error, res Resource) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNoRegion) {
		return fmt.Errorf("%s: %w", res, err)
	}
	code := ErrorCode(err)
	status := HTTPStatus(err)
	switch {
	case code == "ResourceNotFoundException", code == "NoSuchBucket",
		res.Kind == "bucket" && code == "NotFound" && strings.Contains(err.Error(), "HeadBucket"):
		return &MissingError{Res: res, Err: err}
	case credentialCodes[code]:
		return fmt.Errorf("AWS rejected the credentials used for %s (%s): check AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (run `aws sts get-caller-identity`): %w", res, code, err)
	case deniedCodes[code] || status == 403:
		return fmt.Errorf("access to %s denied: grant the IAM policy of docs/aws.md to the caller: %w", res, err)
	case code == "PermanentRedirect", code == "AuthorizationHeaderMalformed", status == 301:
		return fmt.Errorf("%s is in another region: set ?region= on the backend URL to the bucket's region: %w", res, err)
	case isCredentialLookup(err):
		return fmt.Errorf("no AWS credentials for %s: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run `aws sso login`: %w", res, err)
	case isNetwork(err):
		return fmt.Errorf("cannot reach %s: check the network, the region and %s: %w", res, res.endpointVar(), err)
	}
	return fmt.Errorf("%s: %w", res, err)
}

// MissingError: the table or bucket a backend URL names does not exist.
// Fix is the cause and the repair in one sentence, which the CLI puts first
// (termui.Remedy), before the context it was found in.
type MissingError struct {
	Res Resource
	Err error // the SDK's error
}

// Fix says what is missing and the command that creates it.
func (e *MissingError) Fix() string {
	return fmt.Sprintf("%s not found: run `deployer backend init` to create it, or check the backend URL and region", e.Res)
}

func (e *MissingError) Error() string { return e.Fix() + ": " + e.Err.Error() }

// Unwrap returns the SDK's error.
func (e *MissingError) Unwrap() error { return e.Err }

func isCredentialLookup(err error) bool {
	s := err.Error()
	return strings.Contains(s, "failed to retrieve credentials") || strings.Contains(s, "failed to refresh cached credentials")
}

func isNetwork(err error) bool {
	var ne net.Error
	var op *net.OpError
	var dns *net.DNSError
	var send *smithyhttp.RequestSendError
	return errors.As(err, &op) || errors.As(err, &dns) || errors.As(err, &send) || errors.As(err, &ne)
}

// throttleCodes are the AWS answers that ask the caller to slow down.
var throttleCodes = map[string]bool{
	"ThrottlingException": true, "Throttling": true, "ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded": true, "SlowDown": true, "TooManyRequestsException": true, "RequestThrottled": true,
	"RequestThrottledException": true, "LimitExceededException": true, "ServiceUnavailable": true,
	"InternalError": true, "InternalServerError": true, "TransactionConflictException": true,
}

// TransientErrors is embedded by the AWS lock backends (DynamoDB, S3): its
// Transient method implements lockmgr.TransientChecker with IsTransient
// (docs/locking.md, "Backend failures while waiting").
type TransientErrors struct{}

// Transient reports throttling (503 SlowDown among them), 5xx answers and
// network failures: IsTransient.
func (TransientErrors) Transient(err error) bool { return IsTransient(err) }

// IsTransient reports an AWS failure that passes by itself: throttling, a
// 5xx answer, or a network failure (refused, reset, timed out) that outlived
// the SDK's own retries. Access denied, a missing table or bucket and bad
// credentials are not.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if throttleCodes[ErrorCode(err)] {
		return true
	}
	if s := HTTPStatus(err); s >= 500 || s == 429 {
		return true
	}
	return HTTPStatus(err) == 0 && ErrorCode(err) == "" && isNetwork(err)
}

// Wrap is Classify(err, r) behind the operation it failed, in fmt's
// format ("read lock %q", key): "read lock \"k\": <classified>". nil stays
// nil, so a call's error can be returned through it as is.
func (r Resource) Wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), Classify(err, r))
}
