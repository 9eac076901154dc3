package awsbackend

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// ServerTime returns the server's clock, to whole seconds: the Date header of
// the reply to one cheap request that call makes with the given API option
// (for the SDK call's optFns, via o.APIOptions). what names the server in
// errors ("dynamodb", "s3"); a failed call is classified against res.
func ServerTime(what string, res Resource, call func(captureDate func(*middleware.Stack) error) error) (time.Time, error) {
	var at time.Time
	if err := call(CaptureDate(&at)); err != nil {
		return time.Time{}, fmt.Errorf("read %s clock: %w", what, Classify(err, res))
	}
	if at.IsZero() {
		return time.Time{}, fmt.Errorf("read %s clock: the reply had no Date header", what)
	}
	return at, nil
}

// CaptureDate returns an API option (for an SDK call's optFns, via
// o.APIOptions) that stores the Date header of the call's HTTP reply in dst:
// the server's clock, to whole seconds.
func CaptureDate(dst *time.Time) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("deployerCaptureDate",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok {
					if t, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
						*dst = t
					}
				}
				return out, md, err
			}), middleware.After)
	}
}
