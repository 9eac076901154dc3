package statestore

import "testing"

func TestPeekSecretsReadsTheTopLevelBlockOnly(t *testing.T) {
	st := NewState("s", "e")
	st.Serial = 1
	st.Resources["a/b"] = &Resource{Kind: "Command", DesiredConfig: map[string]any{"secrets": map[string]any{"provider": "not this one"}}}
	doc, err := Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	if info := PeekSecrets(doc); info != nil {
		t.Errorf("a state without a secrets block: %+v", info)
	}
	st.Secrets = &SecretsInfo{Provider: "passphrase", Key: "scrypt-1", KDF: "scrypt:N=32768,r=8,p=1", Salt: "c2FsdA==", Check: "x"}
	if doc, err = Encode(st); err != nil {
		t.Fatal(err)
	}
	if info := PeekSecrets(doc); info == nil || *info != *st.Secrets {
		t.Errorf("secrets block: %+v", info)
	}
	compact := []byte(`{"resources":{},"secrets":{"provider":"awskms://k","key":"k","check":"c"}}`)
	if info := PeekSecrets(compact); info == nil || info.Provider != "awskms://k" {
		t.Errorf("a compact document: %+v", info)
	}
}
