//! A JS string read into Rust in one pass, for the large texts that cross per tool call (a tool's
//! output as JSON). napi-rs' `String` asks V8 for the UTF-8 length first (a scan of the whole
//! string), then zeroes a buffer of that size, then has V8 write into it; on a 20 KB output the
//! scan and the zeroing were ~10% of the JS thread's time on the heavy benchmark. Here V8 writes
//! straight into a buffer sized for the worst case (3 bytes per UTF-16 unit); the engine's
//! thread gives the spare capacity back (`shrink_to_fit` in `tool_bridge.rs`).

use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::{check_status, sys, Result, ValueType};

/// A JS string as UTF-8. Its buffer may be up to three times the text: shrink it off the JS
/// thread.
pub struct JsText(pub String);

impl FromNapiValue for JsText {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        // With no buffer, the UTF-16 length: V8 has it without looking at the text.
        let mut units = 0usize;
        check_status!(
            unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut units) },
            "expected a string"
        )?;
        // One UTF-16 unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4), and
        // napi writes a terminating NUL.
        let capacity = units * 3 + 1;
        let mut bytes: Vec<u8> = Vec::with_capacity(capacity);
        let mut written = 0usize;
        check_status!(
            unsafe {
                sys::napi_get_value_string_utf8(
                    env,
                    value,
                    bytes.as_mut_ptr().cast(),
                    capacity,
                    &mut written,
                )
            },
            "expected a string"
        )?;
        // SAFETY: napi wrote `written` bytes (not counting the NUL) of UTF-8, lone surrogates
        // replaced by U+FFFD, as napi-rs' own `String` conversion relies on too.
        unsafe {
            bytes.set_len(written.min(capacity - 1));
            Ok(JsText(String::from_utf8_unchecked(bytes)))
        }
    }
}

impl TypeName for JsText {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for JsText {}
