package awsbackend

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3API is the part of the S3 client that the S3 lock backend
// (internal/lockmgr/s3), the S3 state backend (internal/statestore/s3) and
// the conditional-write probe call; *s3.Client implements it (NewS3Client).
// DeleteObject removes only the probe's scratch object and the history
// snapshot of a state write that lost its compare-and-swap.
type S3API interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

var _ S3API = (*s3.Client)(nil)

// ApplySSE sets the server-side encryption of backend.sse (o.SSE "AES256" or
// "aws:kms", with o.KMSKeyID) on a PUT of either S3 backend; "" leaves the
// bucket's default encryption (docs/aws.md).
func (o Options) ApplySSE(in *s3.PutObjectInput) {
	switch o.SSE {
	case "AES256":
		in.ServerSideEncryption = s3types.ServerSideEncryptionAes256
	case "aws:kms":
		in.ServerSideEncryption = s3types.ServerSideEncryptionAwsKms
		if o.KMSKeyID != "" {
			in.SSEKMSKeyId = aws.String(o.KMSKeyID)
		}
	}
}
