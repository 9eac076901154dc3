package pulumi

import (
	"context"

	"github.com/deployer-dev/deployer/internal/engine"
)

// The engine contract (engine.Engine): each call hands its request to the
// engine's own operation of the same name.

// Preflight checks what the Pulumi components of req.Components need
// (preflight).
func (e *Engine) Preflight(ctx context.Context, req engine.PreflightRequest) error {
	return e.preflight(ctx, req.Components)
}

// Apply runs one `pulumi up` of req.Steps and req.Keep (apply).
func (e *Engine) Apply(ctx context.Context, req engine.ApplyRequest) (engine.ApplyResponse, error) {
	rs, err := e.apply(ctx, req.Steps, req.Inputs)
	return engine.ApplyResponse{Results: rs}, err
}

// Destroy deletes the components of req.Steps (destroy).
func (e *Engine) Destroy(ctx context.Context, req engine.DestroyRequest) (engine.DestroyResponse, error) {
	rs, err := e.destroy(ctx, req.Steps, req.Inputs)
	return engine.DestroyResponse{Results: rs}, err
}

// Preview runs `pulumi preview` of req.Steps and req.Keep (preview).
func (e *Engine) Preview(ctx context.Context, req engine.PreviewRequest) (engine.PreviewResponse, error) {
	text, err := e.preview(ctx, req.Steps, req.Inputs)
	return engine.PreviewResponse{Text: text}, err
}

// Refresh runs `pulumi refresh` of req.Steps and req.Keep (refresh).
func (e *Engine) Refresh(ctx context.Context, req engine.RefreshRequest) (engine.RefreshResponse, error) {
	drift, err := e.refresh(ctx, req.Steps, req.Inputs)
	return engine.RefreshResponse{Drift: drift}, err
}
