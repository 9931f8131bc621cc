//! Conversion between Python's plain data (dict, list, str, int, float, bool,
//! None) and the engine's JSON values, in both directions, without text in
//! between: what the engine parses is what Python holds.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// A Python value of plain data as a JSON value; `what` names it in errors.
pub fn to_value(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        return Err(PyTypeError::new_err(format!("{what}: the integer {obj} does not fit 64 bits")));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        let v = f.value();
        return Number::from_f64(v).map(Value::Number).ok_or_else(|| PyTypeError::new_err(format!("{what}: {v} is not a finite number")));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let key = k
                .downcast::<PyString>()
                .map_err(|_| PyTypeError::new_err(format!("{what}: keys must be strings, not {k}")))?
                .to_cow()?
                .into_owned();
            let value = to_value(&v, &key)?;
            m.insert(key, value);
        }
        return Ok(Value::Object(m));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return obj.try_iter()?.map(|x| to_value(&x?, what)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    // Integers of other types (numpy's) convert through `__index__`.
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::from(i));
    }
    Err(PyTypeError::new_err(format!("{what}: {} is not plain data (dict, list, str, int, float, bool, None)", obj.get_type())))
}

/// A JSON value as Python plain data (objects become dicts in key order).
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => PyList::new(py, a.iter().map(|x| to_py(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any(),
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}
