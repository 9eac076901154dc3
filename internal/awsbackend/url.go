package awsbackend

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// DynamoDBURL is a parsed dynamodb://TABLE?region=R backend URL.
type DynamoDBURL struct {
	Table  string
	Region string // "" = the SDK chain's region (AWS_REGION, profile)
}

// S3URL is a parsed s3://BUCKET[/prefix]?region=R&path_style=true URL.
type S3URL struct {
	Bucket    string
	Prefix    string // without leading or trailing "/"; "" = bucket root
	Region    string
	PathStyle bool // ?path_style=true (MinIO); or backend.path_style
}

// Key joins the prefix and a relative object key ("stacks/s/e/state.json").
func (u S3URL) Key(rel string) string {
	if u.Prefix == "" {
		return rel
	}
	return u.Prefix + "/" + rel
}

// String renders the URL as s3://bucket[/prefix].
func (u S3URL) String() string {
	if u.Prefix == "" {
		return "s3://" + u.Bucket
	}
	return "s3://" + u.Bucket + "/" + u.Prefix
}

// ParseDynamoDBURL parses "dynamodb://TABLE?region=R". Errors say what the URL
// should look like.
func ParseDynamoDBURL(raw string) (DynamoDBURL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "dynamodb" || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return DynamoDBURL{}, fmt.Errorf("lock backend %q: want dynamodb://TABLE?region=REGION (e.g. dynamodb://deployer-state-locks?region=us-east-1)", raw)
	}
	q := u.Query()
	for k := range q {
		if k != "region" {
			return DynamoDBURL{}, fmt.Errorf("lock backend %q: unknown parameter %q (allowed: region)", raw, k)
		}
	}
	return DynamoDBURL{Table: u.Host, Region: q.Get("region")}, nil
}

// ParseS3URL parses "s3://BUCKET[/prefix]?region=R&path_style=true".
func ParseS3URL(raw string) (S3URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return S3URL{}, fmt.Errorf("backend %q: want s3://BUCKET[/PREFIX]?region=REGION (e.g. s3://company-deployer-state?region=us-east-1)", raw)
	}
	out := S3URL{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	q := u.Query()
	for k, v := range q {
		switch k {
		case "region":
			out.Region = v[0]
		case "path_style":
			b, err := strconv.ParseBool(v[0])
			if err != nil {
				return S3URL{}, fmt.Errorf("backend %q: path_style=%q: want true or false", raw, v[0])
			}
			out.PathStyle = b
		default:
			return S3URL{}, fmt.Errorf("backend %q: unknown parameter %q (allowed: region, path_style)", raw, k)
		}
	}
	return out, nil
}
