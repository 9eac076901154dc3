package awsbackend

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

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
