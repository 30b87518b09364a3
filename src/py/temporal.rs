//! Python datetime objects to and from the plain parts in `polycodec_formats::text::temporal`.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyDate, PyDateAccess, PyDateTime, PyDelta, PyDeltaAccess, PyTime, PyTimeAccess, PyTzInfo,
    PyTzInfoAccess,
};

use super::Obj;
use polycodec_formats::text::temporal::{Date, DateTime, Duration, Time, TimeOfDay};

/// Fixed-offset timezones created while decoding, shared so equal offsets give one object.
static OFFSET_ZONES: PyOnceLock<Mutex<HashMap<i32, Py<PyTzInfo>>>> = PyOnceLock::new();

static UTC: PyOnceLock<Py<PyTzInfo>> = PyOnceLock::new();

/// `datetime.timezone.utc`, kept once (asking the datetime C API each time costs more).
#[inline]
fn utc(py: Python<'_>) -> PyResult<&Bound<'_, PyTzInfo>> {
    if let Some(zone) = UTC.get(py) {
        return Ok(zone.bind(py));
    }
    let zone = PyTzInfo::utc(py)?.to_owned().unbind();
    Ok(UTC.get_or_init(py, || zone).bind(py))
}

/// Offsets in whole quarter hours within a day either way (every offset in use today): each
/// has its zone in a slot of its own, read without a lock or a hash.
const QUARTERS: i32 = 24 * 4;
static QUARTER_ZONES: [PyOnceLock<Py<PyTzInfo>>; 2 * QUARTERS as usize + 1] =
    [const { PyOnceLock::new() }; 2 * QUARTERS as usize + 1];

fn zone_for_offset(py: Python<'_>, offset_seconds: i32) -> PyResult<Bound<'_, PyTzInfo>> {
    if offset_seconds == 0 {
        return Ok(utc(py)?.clone());
    }
    if offset_seconds % 900 == 0 && (offset_seconds / 900).abs() < QUARTERS {
        let slot = &QUARTER_ZONES[(offset_seconds / 900 + QUARTERS) as usize];
        if let Some(zone) = slot.get(py) {
            return Ok(zone.bind(py).clone());
        }
        let zone = fixed_zone(py, offset_seconds)?;
        return Ok(slot.get_or_init(py, || zone.unbind()).bind(py).clone());
    }
    let zones = OFFSET_ZONES.get_or_init(py, || Mutex::new(HashMap::new()));
    if let Some(zone) = zones.lock().expect("zone cache").get(&offset_seconds) {
        return Ok(zone.bind(py).clone());
    }
    let zone = fixed_zone(py, offset_seconds)?;
    let mut guard = zones.lock().expect("zone cache");
    if guard.len() < 1024 {
        guard.insert(offset_seconds, zone.clone().unbind());
    }
    Ok(zone)
}

/// A new `datetime.timezone` of a fixed offset.
#[cold]
fn fixed_zone(py: Python<'_>, offset_seconds: i32) -> PyResult<Bound<'_, PyTzInfo>> {
    let delta = PyDelta::new(py, 0, offset_seconds, 0, true)?;
    PyTzInfo::fixed_offset(py, delta)
}

#[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.3shared")]
pub fn new_datetime<'py>(py: Python<'py>, parts: &DateTime) -> PyResult<Obj<'py>> {
    if parts.offset_seconds == Some(0) {
        if let Some(value) = new_utc_datetime(py, parts) {
            return value;
        }
    }
    let zone = match parts.offset_seconds {
        Some(offset) => Some(zone_for_offset(py, offset)?),
        None => None,
    };
    Ok(PyDateTime::new(
        py,
        i32::from(parts.date.year),
        parts.date.month,
        parts.date.day,
        parts.time.hour,
        parts.time.minute,
        parts.time.second,
        parts.time.microsecond,
        zone.as_ref(),
    )?
    .into_any())
}

/// A UTC datetime straight from the datetime C API with the cached `timezone.utc` (the
/// common case: what polycodec and msgspec write), skipping the general path's zone lookup and
/// reference counting. `None` where the API is not at hand yet (the general path imports it).
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
#[inline]
fn new_utc_datetime<'py>(py: Python<'py>, parts: &DateTime) -> Option<PyResult<Obj<'py>>> {
    let zone = UTC.get(py)?;
    // SAFETY: reads the pointer PyDateTime_IMPORT stored (null until then, checked).
    let api = unsafe { pyo3::ffi::PyDateTimeAPI().as_ref() }?;
    // SAFETY: the API's own constructor with in-range parts (the parser checked them), a live
    // tzinfo it takes its own reference to, and its datetime type; returns a new reference
    // or NULL with an exception set.
    Some(unsafe {
        let raw = (api.DateTime_FromDateAndTime)(
            i32::from(parts.date.year),
            i32::from(parts.date.month),
            i32::from(parts.date.day),
            i32::from(parts.time.hour),
            i32::from(parts.time.minute),
            i32::from(parts.time.second),
            parts.time.microsecond as i32,
            zone.as_ptr(),
            api.DateTimeType,
        );
        Bound::from_owned_ptr_or_err(py, raw)
    })
}

/// Without the datetime C API's struct, the general path only.
#[cfg(any(Py_LIMITED_API, PyPy, GraalPy))]
#[inline]
fn new_utc_datetime<'py>(_py: Python<'py>, _parts: &DateTime) -> Option<PyResult<Obj<'py>>> {
    None
}

pub fn new_date<'py>(py: Python<'py>, parts: &Date) -> PyResult<Obj<'py>> {
    Ok(PyDate::new(py, i32::from(parts.year), parts.month, parts.day)?.into_any())
}

pub fn new_time<'py>(py: Python<'py>, parts: &TimeOfDay) -> PyResult<Obj<'py>> {
    let zone = match parts.offset_seconds {
        Some(offset) => Some(zone_for_offset(py, offset)?),
        None => None,
    };
    Ok(PyTime::new(
        py,
        parts.time.hour,
        parts.time.minute,
        parts.time.second,
        parts.time.microsecond,
        zone.as_ref(),
    )?
    .into_any())
}

pub fn new_timedelta<'py>(py: Python<'py>, parts: &Duration) -> PyResult<Obj<'py>> {
    let days = i32::try_from(parts.days)
        .map_err(|_| PyValueError::new_err("timedelta days out of range"))?;
    Ok(PyDelta::new(
        py,
        days,
        parts.seconds as i32,
        parts.microseconds as i32,
        false,
    )?
    .into_any())
}

/// Whole seconds of a tzinfo's UTC offset for this value; offsets with microseconds have no
/// RFC 3339 form and are refused.
fn offset_seconds(zone: &Bound<'_, PyTzInfo>, value: &Obj<'_>) -> PyResult<Option<i32>> {
    let py = zone.py();
    if zone.is(utc(py)?) {
        return Ok(Some(0));
    }
    let offset = zone.call_method1(pyo3::intern!(py, "utcoffset"), (value,))?;
    if offset.is_none() {
        return Ok(None);
    }
    let delta = offset.cast_into::<PyDelta>()?;
    let seconds = delta.get_days() * 86_400 + delta.get_seconds();
    // What `datetime.utcoffset()` itself enforces; a tzinfo's own method is called directly
    // here, so its result is checked the same way (no decoder reads a larger offset back).
    if !(-86_400 < seconds && seconds < 86_400) {
        return Err(PyValueError::new_err(format!(
            "tzinfo.utcoffset() returned {}, but a UTC offset must be strictly between -24 and \
             24 hours",
            delta.str()?
        )));
    }
    if delta.get_microseconds() != 0 {
        return Err(PyValueError::new_err(
            "a UTC offset with microseconds has no RFC 3339 form",
        ));
    }
    Ok(Some(seconds))
}

/// The parts of `value` when it is an exact `datetime` that is naive, in
/// `datetime.timezone.utc` (what most data holds) or in another fixed-offset
/// `datetime.timezone` of whole seconds, read straight from the object with the datetime C
/// API's accessors: no tzinfo reference taken, no `utcoffset` call. `None` for anything else
/// (another kind of tzinfo, a subclass, the datetime API not loaded yet). Every encoder gets it
/// through [`datetime_parts`]; the JSON and MessagePack walk also calls it inline.
#[inline(always)]
pub fn utc_or_naive_parts(value: &Obj<'_>) -> Option<DateTime> {
    // SAFETY: a live object, borrowed for the call.
    unsafe { direct_parts(value.as_ptr()) }
}

/// [`utc_or_naive_parts`] of a borrowed object pointer.
///
/// # Safety
/// `object` must be a live object.
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
#[inline(always)]
pub unsafe fn direct_parts(object: *mut pyo3::ffi::PyObject) -> Option<DateTime> {
    use pyo3::ffi;
    // SAFETY: the datetime C API capsule, once loaded, lives as long as the interpreter; an
    // object of exactly its datetime type is a PyDateTime_DateTime, whose fields the
    // accessors read (the tzinfo accessor checks `hastzinfo` before the tzinfo field).
    unsafe {
        let api = ffi::PyDateTimeAPI();
        if api.is_null() || ffi::Py_TYPE(object) != (*api).DateTimeType {
            return None;
        }
        let zone = ffi::PyDateTime_DATE_GET_TZINFO(object);
        let offset_seconds = if zone == ffi::Py_None() {
            None
        } else if zone == (*api).TimeZone_UTC {
            Some(0)
        } else {
            Some(fixed_offset(api, zone)?)
        };
        Some(DateTime {
            date: Date {
                year: ffi::PyDateTime_GET_YEAR(object) as u16,
                month: ffi::PyDateTime_GET_MONTH(object) as u8,
                day: ffi::PyDateTime_GET_DAY(object) as u8,
            },
            time: Time {
                hour: ffi::PyDateTime_DATE_GET_HOUR(object) as u8,
                minute: ffi::PyDateTime_DATE_GET_MINUTE(object) as u8,
                second: ffi::PyDateTime_DATE_GET_SECOND(object) as u8,
                microsecond: ffi::PyDateTime_DATE_GET_MICROSECOND(object) as u32,
            },
            offset_seconds,
        })
    }
}

/// The parts of `value` when it is exactly a naive `time` ([`direct_naive_time`]).
#[inline(always)]
pub fn naive_time_parts(value: &Obj<'_>) -> Option<Time> {
    // SAFETY: a live object, borrowed for the call.
    unsafe { direct_naive_time(value.as_ptr()) }
}

/// The parts of `value` when it is exactly a `timedelta` ([`direct_duration`]).
#[inline(always)]
pub fn exact_duration_parts(value: &Obj<'_>) -> Option<Duration> {
    // SAFETY: a live object, borrowed for the call.
    unsafe { direct_duration(value.as_ptr()) }
}

/// The parts of `object` when it is exactly a naive `datetime.time` (read through the datetime
/// C API's accessors, as [`direct_parts`] reads a datetime); `None` leaves any other value to
/// [`time_parts`].
///
/// # Safety
/// `object` must be a live object.
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
#[inline(always)]
pub unsafe fn direct_naive_time(object: *mut pyo3::ffi::PyObject) -> Option<Time> {
    use pyo3::ffi;
    // SAFETY: the capsule, once loaded, lives as long as the interpreter; an object of exactly
    // its time type is a PyDateTime_Time, whose fields the accessors read (the tzinfo accessor
    // checks `hastzinfo` first).
    unsafe {
        let api = ffi::PyDateTimeAPI();
        if api.is_null()
            || ffi::Py_TYPE(object) != (*api).TimeType
            || ffi::PyDateTime_TIME_GET_TZINFO(object) != ffi::Py_None()
        {
            return None;
        }
        Some(Time {
            hour: ffi::PyDateTime_TIME_GET_HOUR(object) as u8,
            minute: ffi::PyDateTime_TIME_GET_MINUTE(object) as u8,
            second: ffi::PyDateTime_TIME_GET_SECOND(object) as u8,
            microsecond: ffi::PyDateTime_TIME_GET_MICROSECOND(object) as u32,
        })
    }
}

/// The parts of `object` when it is exactly a `datetime.timedelta`; `None` leaves any other
/// value to [`duration_parts`].
///
/// # Safety
/// `object` must be a live object.
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
#[inline(always)]
pub unsafe fn direct_duration(object: *mut pyo3::ffi::PyObject) -> Option<Duration> {
    use pyo3::ffi;
    // SAFETY: as in `direct_naive_time`: an object of exactly the capsule's timedelta type is
    // a PyDateTime_Delta.
    unsafe {
        let api = ffi::PyDateTimeAPI();
        if api.is_null() || ffi::Py_TYPE(object) != (*api).DeltaType {
            return None;
        }
        Some(Duration {
            days: i64::from(ffi::PyDateTime_DELTA_GET_DAYS(object)),
            seconds: ffi::PyDateTime_DELTA_GET_SECONDS(object) as u32,
            microseconds: ffi::PyDateTime_DELTA_GET_MICROSECONDS(object) as u32,
        })
    }
}

/// Without the accessors every time takes [`time_parts`].
///
/// # Safety
/// None needed: nothing is read.
#[cfg(any(Py_LIMITED_API, PyPy, GraalPy))]
#[inline(always)]
pub unsafe fn direct_naive_time(_object: *mut pyo3::ffi::PyObject) -> Option<Time> {
    None
}

/// Without the accessors every timedelta takes [`duration_parts`].
///
/// # Safety
/// None needed: nothing is read.
#[cfg(any(Py_LIMITED_API, PyPy, GraalPy))]
#[inline(always)]
pub unsafe fn direct_duration(_object: *mut pyo3::ffi::PyObject) -> Option<Duration> {
    None
}

/// CPython's `datetime.timezone` object (`PyDateTime_TimeZone`, private to `_datetimemodule.c`
/// and unchanged since 3.2): its fixed offset (a timedelta) and its name.
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
#[repr(C)]
struct TimeZoneObject {
    ob_base: pyo3::ffi::PyObject,
    offset: *mut pyo3::ffi::PyObject,
    name: *mut pyo3::ffi::PyObject,
}

/// The UTC offset of `zone` in whole seconds when it is exactly a `datetime.timezone`: the
/// offset it holds, which is what its `utcoffset` returns for any datetime. `None` for any
/// other tzinfo, and for an offset with microseconds (the `utcoffset` path raises the error),
/// so those take the general path.
///
/// # Safety
/// `api` must be the loaded datetime C API and `zone` a live object.
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy)))]
#[inline(never)]
unsafe fn fixed_offset(
    api: *const pyo3::ffi::PyDateTime_CAPI,
    zone: *mut pyo3::ffi::PyObject,
) -> Option<i32> {
    use pyo3::ffi;
    // SAFETY: `timezone.utc` is an instance of exactly `datetime.timezone` (which cannot be
    // subclassed), so an object of its type is a PyDateTime_TimeZone; its offset is checked to
    // be exactly a timedelta before its fields are read.
    unsafe {
        if ffi::Py_TYPE(zone) != ffi::Py_TYPE((*api).TimeZone_UTC) {
            return None;
        }
        let offset = (*zone.cast::<TimeZoneObject>()).offset;
        if offset.is_null() || ffi::Py_TYPE(offset) != (*api).DeltaType {
            return None;
        }
        if ffi::PyDateTime_DELTA_GET_MICROSECONDS(offset) != 0 {
            return None;
        }
        let seconds = ffi::PyDateTime_DELTA_GET_DAYS(offset) * 86_400
            + ffi::PyDateTime_DELTA_GET_SECONDS(offset);
        (-86_400 < seconds && seconds < 86_400).then_some(seconds)
    }
}

/// Without the datetime C API's accessors every datetime takes [`datetime_parts`].
///
/// # Safety
/// None needed: nothing is read.
#[cfg(any(Py_LIMITED_API, PyPy, GraalPy))]
#[inline(always)]
pub unsafe fn direct_parts(_object: *mut pyo3::ffi::PyObject) -> Option<DateTime> {
    None
}

/// The parts of any datetime: exact naive and UTC ones through [`utc_or_naive_parts`], any
/// other zone by asking its `utcoffset`.
pub fn datetime_parts(value: &Bound<'_, PyDateTime>) -> PyResult<DateTime> {
    if let Some(parts) = utc_or_naive_parts(value.as_any()) {
        return Ok(parts);
    }
    let offset_seconds = match value.get_tzinfo() {
        Some(zone) => offset_seconds(&zone, value.as_any())?,
        None => None,
    };
    Ok(DateTime {
        date: Date {
            year: value.get_year() as u16,
            month: value.get_month(),
            day: value.get_day(),
        },
        time: Time {
            hour: value.get_hour(),
            minute: value.get_minute(),
            second: value.get_second(),
            microsecond: value.get_microsecond(),
        },
        offset_seconds,
    })
}

pub fn date_parts(value: &Bound<'_, PyDate>) -> Date {
    Date {
        year: value.get_year() as u16,
        month: value.get_month(),
        day: value.get_day(),
    }
}

pub fn time_parts(value: &Bound<'_, PyTime>) -> PyResult<TimeOfDay> {
    let offset_seconds = match value.get_tzinfo() {
        Some(zone) => {
            let py = value.py();
            offset_seconds(&zone, &py.None().into_bound(py))?
        }
        None => None,
    };
    Ok(TimeOfDay {
        time: Time {
            hour: value.get_hour(),
            minute: value.get_minute(),
            second: value.get_second(),
            microsecond: value.get_microsecond(),
        },
        offset_seconds,
    })
}

pub fn duration_parts(value: &Bound<'_, PyDelta>) -> Duration {
    Duration {
        days: i64::from(value.get_days()),
        seconds: value.get_seconds() as u32,
        microseconds: value.get_microseconds() as u32,
    }
}
