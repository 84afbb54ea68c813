/**
 * Tests read loosely-typed JSON bodies and assert on their shape with expect(); `any`
 * keeps those assertions readable (the shapes themselves are what is under test).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(res: Response): Promise<any> {
  return res.json();
}
